import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import type { UserActor } from '../../services/access/actor.js';
import type { Action } from '../../services/access/permissions.js';
import type { Services } from '../../services/index.js';
import type { ResourceKind } from '../../schemas/access.js';
import { PageQuery } from '../../schemas/common.js';
import { compileValidator } from '../../http/validation.js';

/**
 * One MCP tool (CONTRACT 17): what it reaches (`resource`, `action`: the same words as a route's `auth`, so the
 * tool list follows the key's scope and the user's role exactly as /v1 does), its input as a TypeBox schema
 * (the JSON Schema the client sees and the validator checks), and a `run` that calls the same service a route
 * calls, with the same actor. Its answer is what the API answers.
 */
export interface McpTool<P extends TProperties = TProperties> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: TObject<P>;
  readonly resource: ResourceKind;
  readonly action: Action;
  /** The user's project role may allow it where their organisation role does not (CONTRACT 15): the service decides. */
  readonly project?: true;
  /** Deletes something: offered only while an owner allows AI agents to delete (CONTRACT 17). */
  readonly deletes?: true;
  /** Repeating the call with the same input changes nothing more (MCP's `idempotentHint`). */
  readonly idempotent: boolean;
  run(actor: UserActor, input: Static<TObject<P>>, services: Services): Promise<unknown>;
}

/** A tool with its compiled validator, as the server holds it. */
export interface CompiledTool extends McpTool {
  readonly validate: ValidateFunction;
  readonly annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

export function tool<P extends TProperties>(definition: McpTool<P>): McpTool {
  return definition as unknown as McpTool;
}

/** Input objects refuse unknown fields, like request bodies. */
export function input<P extends TProperties>(properties: P): TObject<P> {
  return Type.Object(properties, { additionalProperties: false });
}

/** `limit` and `cursor`, as every /v1 list takes them. */
export const page = PageQuery;

/** What a tool that deletes or removes answers: the API's 204 has no body. */
export const done = { done: true } as const;

/** An ISO time filter as the repositories take it (ms), as the routes read their query. */
export const time = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));

export const Id = (what: string) => Type.String({ minLength: 1, maxLength: 128, description: `The ${what}'s id.` });

export function compileTool(definition: McpTool): CompiledTool {
  const read = definition.action === 'read';
  return {
    ...definition,
    validate: compileValidator(definition.input, 'body'),
    annotations: {
      readOnlyHint: read,
      destructiveHint: definition.deletes === true,
      idempotentHint: read || definition.idempotent,
      // Every tool acts inside this workspace only.
      openWorldHint: false,
    },
  };
}
