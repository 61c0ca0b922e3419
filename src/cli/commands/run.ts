import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, daemonFetch, daemonTargetFrom } from "../daemonClient.ts";
import { failure, SessionFollower } from "../sessionFollower.ts";

export const runCommand: Command = {
  path: ["run"],
  summary:
    "Give the agent a task and stream its turn; asks before privileged tools with one key (exit 3 without a TTY); Ctrl-C cancels or detaches.",
  usage: 'agentd run "check disk usage" [--on HOP] [--url URL] [--model MODEL] [--session ID]',
  allowPositionals: true,
  options: {
    url: { type: "string" },
    token: { type: "string" },
    model: { type: "string" },
    session: { type: "string" },
    on: { type: "string" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --url URL         agentd to talk to (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    "      --model MODEL     model for a new session (default: agent.model in the config)",
    "      --session ID      continue an existing session instead of starting one",
    "      --on HOP          run a new session's tools on a connected hop (default: local)",
    ...DAEMON_LOCATION_HELP,
    "",
    "On a terminal a question is answered with one key: o (once), s (session), d (deny); a decision made",
    "elsewhere (the page, agentd approve) is followed. Ctrl-C asks: c cancels the turn (exit 130), l leaves it",
    "running and prints the agentd attach command that follows it again (exit 0), w watches on.",
    "Without a terminal a question ends the command with exit 3.",
  ],
  async run({ values, positionals }) {
    const prompt = positionals.join(" ").trim();
    if (!prompt) throw new UsageError('say what the agent should do, e.g. agentd run "check disk usage"');
    const target = daemonTargetFrom(values);
    let sessionId = values.session as string | undefined;
    if (!sessionId) {
      const created = await daemonFetch(target, "/api/sessions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          ...(values.model ? { model: values.model } : {}),
          ...(typeof values.on === "string" ? { target: values.on } : {}),
        }),
      });
      if (created.status !== 201) throw await failure(created);
      sessionId = ((await created.json()) as { id: string }).id;
    }
    process.stderr.write(`session ${sessionId}\n`);
    const follower = new SessionFollower(target, sessionId, values);
    const onInterrupt = () => {
      follower.interrupt().catch((error: unknown) => {
        process.stderr.write(`agentd run: ${(error as Error).message}\n`);
        follower.stream.abort();
      });
    };
    process.on("SIGINT", onInterrupt);
    try {
      // No deadline on the stream: a turn may run for a long time; heartbeats keep it alive.
      await follower.follow(
        await daemonFetch(target, `/api/sessions/${sessionId}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ content: prompt }),
          signal: follower.stream.signal,
        }),
      );
      await follower.settled();
    } finally {
      process.off("SIGINT", onInterrupt);
      follower.finish();
    }
    if (follower.exitCode !== undefined) return follower.exitCode;
    return follower.ended === "stop" || follower.ended === "max_steps" ? 0 : 1;
  },
};
