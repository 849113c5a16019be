/** How OAuth tokens begin (CONTRACT 17), as API keys begin `wsk_`: whoever reads one knows what it is. */
export const ACCESS_TOKEN_PREFIX = 'wsa_';
export const REFRESH_TOKEN_PREFIX = 'wsr_';
