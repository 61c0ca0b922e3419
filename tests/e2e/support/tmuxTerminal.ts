import { spawnSync } from "node:child_process";

/**
 * A private tmux server (its own socket), for driving CLI commands on a real terminal the way a
 * person does: send keys, read the screen. kill() ends the server and every pane's process.
 */
export class TmuxTerminal {
  readonly socket = `agentd-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  #windows = 0;

  #tmux(...args: string[]): string {
    const result = spawnSync("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${result.stderr}`);
    return result.stdout;
  }

  /** Starts `command` (a shell line) in a new window of its own; returns the window's target. */
  start(command: string, env: Record<string, string> = {}): string {
    if (this.#windows === 0) {
      this.#tmux("new-session", "-d", "-s", "t", "-n", "idle", "-x", "300", "-y", "60", "sleep 3600");
      // The last screen and the exit status stay readable after a command ends.
      this.#tmux("set-option", "-g", "remain-on-exit", "on");
    }
    const name = `w${this.#windows++}`;
    const sets = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    // bash waits for the command and goes on when it handled Ctrl-C itself (and exited), then prints its status.
    const wrapped = `${command}; echo "[exit $?]"`;
    this.#tmux("new-window", "-d", "-t", "t", "-n", name, ...sets, "bash", "-c", wrapped);
    return `t:${name}`;
  }

  screen(target: string): string {
    return this.#tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", target);
  }

  keys(target: string, ...keys: string[]): void {
    this.#tmux("send-keys", "-t", target, ...keys);
  }

  /** Polls the screen until `done` holds; throws with the screen at the deadline. */
  async waitFor(target: string, description: string, done: (screen: string) => boolean, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen(target);
      if (done(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${description}; the terminal showed:\n${screen}`);
      await Bun.sleep(100);
    }
  }

  /**
   * The command's exit status, once it has ended: the wrapping shell prints it. (tmux's own
   * pane_dead_status is empty when the terminal's end reaches tmux before the process's exit.)
   */
  async exitCode(target: string, timeoutMs = 60_000): Promise<number> {
    const screen = await this.waitFor(target, "the command's exit", (s) => /^\[exit \d+\]$/m.test(s), timeoutMs);
    return Number(/^\[exit (\d+)\]$/m.exec(screen)![1]);
  }

  kill(): void {
    spawnSync("tmux", ["-L", this.socket, "kill-server"]);
  }
}
