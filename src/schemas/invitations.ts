import { Type } from '@sinclair/typebox';

export const TokenParams = Type.Object({ token: Type.String({ description: 'The token from the invitation link.' }) });

export const AcceptInvitationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: '1 to 255 characters (code points).' }),
    password: Type.String({ minLength: 8, maxLength: 1024, description: '8 to 1,024 characters (code points).' }),
  },
  { additionalProperties: false, title: 'AcceptInvitationRequest' },
);
