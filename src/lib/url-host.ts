/** A URL named by its host ("hooks.example.com:8443"), for headings and summaries; the text itself when it is no URL. */
export function hostOf(url: string): string {
  return URL.parse(url)?.host ?? url;
}
