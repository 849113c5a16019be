import { SCIM_MAX_RESULTS } from '../../services/provisioning/scim-directory-service.js';
import { GROUP_SCHEMA, LIST_SCHEMA, USER_SCHEMA } from '../../services/provisioning/scim-resources.js';

/**
 * The discovery documents of RFC 7644 section 4: what this server supports, its two resource types and their
 * schemas (only the attributes it keeps). Built once per base URL; they describe the SCIM API in place of
 * OpenAPI.
 */

const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

type Json = Record<string, unknown>;

function attr(name: string, type: string, extra: Json = {}): Json {
  return { name, type, multiValued: false, required: false, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'none', ...extra };
}

export function serviceProviderConfig(baseUrl: string): Json {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: `${baseUrl.replace(/\/scim\/v2$/, '')}/docs`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      { type: 'oauthbearertoken', name: 'SCIM token', description: 'Authorization: Bearer wss_…, made by an owner on the SCIM settings page.', primary: true },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  };
}

export function resourceTypes(baseUrl: string): Json[] {
  return [
    { schemas: [RESOURCE_TYPE_SCHEMA], id: 'User', name: 'User', endpoint: '/Users', description: 'A member of the organisation', schema: USER_SCHEMA, meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/User` } },
    { schemas: [RESOURCE_TYPE_SCHEMA], id: 'Group', name: 'Group', endpoint: '/Groups', description: 'A group the provider pushes, mapped to roles by an owner', schema: GROUP_SCHEMA, meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/Group` } },
  ];
}

export function schemas(baseUrl: string): Json[] {
  return [
    {
      schemas: [SCHEMA_SCHEMA],
      id: USER_SCHEMA,
      name: 'User',
      description: 'A member: userName is their sign-in e-mail, unique in the organisation, compared case-insensitively.',
      attributes: [
        attr('userName', 'string', { required: true, uniqueness: 'server' }),
        attr('externalId', 'string', { caseExact: true }),
        attr('displayName', 'string'),
        attr('active', 'boolean'),
        { ...attr('name', 'complex'), subAttributes: [attr('givenName', 'string'), attr('familyName', 'string'), attr('formatted', 'string')] },
        { ...attr('emails', 'complex', { multiValued: true, mutability: 'readOnly' }), subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] },
      ],
      meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${USER_SCHEMA}` },
    },
    {
      schemas: [SCHEMA_SCHEMA],
      id: GROUP_SCHEMA,
      name: 'Group',
      description: 'A group of members; an owner maps it to an organisation role and project roles.',
      attributes: [
        attr('displayName', 'string', { required: true, uniqueness: 'server' }),
        attr('externalId', 'string', { caseExact: true }),
        { ...attr('members', 'complex', { multiValued: true }), subAttributes: [attr('value', 'string', { caseExact: true }), attr('display', 'string', { mutability: 'readOnly' })] },
      ],
      meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${GROUP_SCHEMA}` },
    },
  ];
}

export function listOf(resources: Json[]): Json {
  return { schemas: [LIST_SCHEMA], totalResults: resources.length, itemsPerPage: resources.length, startIndex: 1, Resources: resources };
}
