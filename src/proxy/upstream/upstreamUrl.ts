/**
 * Normalises a configured base_url so endpoints are appended once: users paste
 * "https://host/v1/", "https://host/v1/chat/completions" or "…/responses" alike.
 */
export function normalizeBaseUrl(baseUrl: string): string {
  let url = baseUrl.trim().replace(/\/+$/, "");
  for (const suffix of ["/chat/completions", "/completions", "/responses", "/models"]) {
    if (url.endsWith(suffix)) {
      url = url.slice(0, -suffix.length).replace(/\/+$/, "");
      break;
    }
  }
  return url;
}
