import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonFetch, daemonJson, daemonTargetFrom } from "../daemonClient.ts";
import { SessionFollower } from "../sessionFollower.ts";
import { DaemonTerminal, followTerminal } from "../terminalFollower.ts";

interface SessionDetail {
  session: { id: string; state: string };
  approvals: { id: string; status: string; tool: string; summary: string }[];
  last_event: number;
}

export const attachCommand: Command = {
  path: ["attach"],
  summary:
    "Follow a session: an agent's (ses_…) as agentd run does, replaying its events and asking its questions; a terminal's (from agentd exec) to its exit.",
  usage: "agentd attach SESSION [--after N] [--on HOP] [--url URL]",
  options: { after: { type: "string" }, on: { type: "string" }, ...DAEMON_OPTIONS },
  allowPositionals: true,
  help: [
    "      --after N         start after event N (what a detached agentd run or attach printed); default: the whole session",
    "      --on HOP          the hop a terminal session runs on (default: local)",
    "      --url URL         agentd to ask (default: the local daemon)",
    ...DAEMON_LOCATION_HELP,
    "",
    "Exits once the session is idle: 0 when its last turn ended normally, 1 when it failed. On a terminal",
    "its pending questions are asked with one key (o once, s session, d deny); without one they end the",
    "command with exit 3. Ctrl-C asks: c cancels the turn (exit 130), l leaves it running (exit 0), w watches on.",
    "A terminal session is followed as agentd exec does: its output until its command exits (with its code);",
    "Ctrl-C goes to the command, Ctrl-] detaches again.",
  ],
  async run({ values, positionals }) {
    const [sessionId, ...extra] = positionals;
    if (!sessionId || extra.length) throw new UsageError("expected one session id: agentd attach SESSION");
    const afterText = typeof values.after === "string" ? values.after : "0";
    if (!/^\d+$/.test(afterText)) throw new UsageError(`Cannot use "${afterText}" as --after: expected an event number (0 or more)`);
    const after = Number(afterText);
    const target = daemonTargetFrom(values);
    // Agent sessions are ses_…; anything else is a terminal session's id.
    if (!sessionId.startsWith("ses_")) {
      const terminal = new DaemonTerminal(target, typeof values.on === "string" ? values.on : "local");
      return followTerminal(terminal, await terminal.type(sessionId, ""), { location: values });
    }
    const id = encodeURIComponent(sessionId);
    const detail = await daemonJson<SessionDetail>(target, `/api/sessions/${id}`);
    process.stderr.write(`session ${detail.session.id} (${detail.session.state})\n`);
    const follower = new SessionFollower(target, detail.session.id, values, detail.last_event);
    follower.last = after;
    follower.askAfterReplay(
      detail.approvals.filter((a) => a.status === "pending").map((a) => ({ approval_id: a.id, tool: a.tool, summary: a.summary })),
    );
    // Nothing to replay and a question nobody can answer here: said, exit 3, no stream opened.
    if (follower.exitCode !== undefined) return follower.exitCode;
    const onInterrupt = () => {
      follower.interrupt().catch((error: unknown) => {
        process.stderr.write(`agentd attach: ${(error as Error).message}\n`);
        follower.stream.abort();
      });
    };
    process.on("SIGINT", onInterrupt);
    try {
      // No deadline on the stream: a turn may run for a long time; heartbeats keep it alive.
      await follower.follow(
        await daemonFetch(target, `/api/sessions/${id}/events?after=${after}`, { signal: follower.stream.signal }),
        true,
      );
      await follower.settled();
    } finally {
      process.off("SIGINT", onInterrupt);
      follower.finish();
    }
    if (follower.exitCode !== undefined) return follower.exitCode;
    return follower.ended === undefined || follower.ended === "stop" || follower.ended === "max_steps" ? 0 : 1;
  },
};
