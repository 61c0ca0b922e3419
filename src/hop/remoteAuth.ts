/**
 * What the remote agentd's API does with the hop's token:
 * - `ok`: refuses a request without it and accepts one with it;
 * - `open`: answers without it (an agentd started before hops required the token);
 * - `rejected`: refuses the token the hop read (the token file changed under a running agentd).
 */
export type RemoteAuthState = "ok" | "open" | "rejected";

/** Classifies the answers of one protected route, asked once without and once with the token. */
export function classifyRemoteAuth(statusWithout: number, statusWith: number): RemoteAuthState {
  if (statusWithout !== 401) return "open";
  return statusWith === 401 ? "rejected" : "ok";
}

export function bearerHeader(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

// Any route but /livez needs the token; /readyz is cheap and on every build.
const PROTECTED_PATH = "/readyz";

/** Asks the remote agentd, through the tunnel at `baseUrl`, whether it requires and accepts `token`. */
export async function probeRemoteAuth(baseUrl: string, token: string, timeoutMs: number): Promise<RemoteAuthState> {
  const ask = async (headers: Record<string, string>) => {
    const response = await fetch(baseUrl + PROTECTED_PATH, { headers, signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status;
  };
  const without = await ask({});
  const withToken = without === 401 ? await ask(bearerHeader(token)) : without;
  return classifyRemoteAuth(without, withToken);
}
