/** A label matcher as Alertmanager's v2 API takes and lists it. */
export interface AmMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual?: boolean;
}

/** An Alertmanager silence as `GET /api/v2/silences` lists it. */
export interface AmSilence {
  id: string;
  matchers: AmMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
  status: { state: "active" | "pending" | "expired" };
}

export type NewAmSilence = Omit<AmSilence, "id" | "status">;

/** An incident an agentd silence covers: Alertmanager must mute its alert until `until`. */
export interface WantedSilence {
  incidentId: number;
  until: number;
  silenceId: number;
  target: string;
  reason: string | null;
}

export interface AmSilencePlan {
  create: Array<{ incidentId: number; silence: NewAmSilence }>;
  /** Ids of agentd's own Alertmanager silences nothing covers any more (lifted, renewed, or the incident resolved). */
  expire: string[];
}

/** Who the silences agentd makes are by, so agentd only ever expires its own (this host's). */
export function amSilenceAuthor(host: string): string {
  return `agentd@${host}`;
}

function matcher(name: string, value: string): AmMatcher {
  return { name, value, isRegex: false, isEqual: true };
}

function incidentOf(silence: AmSilence): string | undefined {
  return silence.matchers.find((m) => m.name === "incident" && !m.isRegex && m.isEqual !== false)?.value;
}

/** Alertmanager may round the end it was given; a second apart is the same end. */
function sameEnd(silence: AmSilence, until: number): boolean {
  return Math.abs(Date.parse(silence.endsAt) - until) < 1000;
}

/**
 * What makes Alertmanager's silences match agentd's: one silence per covered incident (matching
 * its `AgentdIncident` alert by host and incident id) ending when agentd's does, and every other
 * unexpired silence this host made expired. Comparing with what Alertmanager lists, not with what
 * was sent, keeps it right across supervisor restarts and Alertmanager's own expiry. Pure.
 */
export function planAmSilences(existing: readonly AmSilence[], wanted: readonly WantedSilence[], host: string, now: number): AmSilencePlan {
  const author = amSilenceAuthor(host);
  const ours = existing.filter(
    (s) =>
      s.createdBy === author && s.status.state !== "expired" && s.matchers.some((m) => m.name === "host" && m.value === host && !m.isRegex),
  );
  const kept = new Set<string>();
  const create: AmSilencePlan["create"] = [];
  for (const want of wanted) {
    if (want.until <= now) continue;
    const match = ours.find((s) => incidentOf(s) === String(want.incidentId) && sameEnd(s, want.until));
    if (match) {
      kept.add(match.id);
      continue;
    }
    create.push({
      incidentId: want.incidentId,
      silence: {
        matchers: [matcher("alertname", "AgentdIncident"), matcher("host", host), matcher("incident", String(want.incidentId))],
        startsAt: new Date(now).toISOString(),
        endsAt: new Date(want.until).toISOString(),
        createdBy: author,
        comment: `agentd silence #${want.silenceId} on ${want.target}${want.reason ? `: ${want.reason}` : ""} (lifting it in agentd expires this silence)`,
      },
    });
  }
  return { create, expire: ours.filter((s) => !kept.has(s.id)).map((s) => s.id) };
}

/** Alertmanager's silence API at one base URL (`/api/v2/silences`, `/api/v2/silence/{id}`). */
export class AmSilenceClient {
  constructor(
    private readonly base: string,
    private readonly timeoutMs: number,
  ) {}

  async list(): Promise<AmSilence[]> {
    return (await this.#call("GET", "/api/v2/silences")) as AmSilence[];
  }

  async create(silence: NewAmSilence): Promise<string> {
    const answer = (await this.#call("POST", "/api/v2/silences", silence)) as { silenceID?: string };
    if (!answer.silenceID) throw new Error("Alertmanager created a silence without answering its id");
    return answer.silenceID;
  }

  async expire(id: string): Promise<void> {
    await this.#call("DELETE", `/api/v2/silence/${encodeURIComponent(id)}`);
  }

  async #call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Alertmanager answered ${method} ${path} with ${response.status}: ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
}
