import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export interface PortHolder {
  pid: number;
  command: string;
}

/** Socket inodes listening on a TCP port, from /proc/net/tcp and tcp6 (state 0A is LISTEN). */
function listeningInodes(port: number, tables: string[] = ["/proc/net/tcp", "/proc/net/tcp6"]): Set<string> {
  const inodes = new Set<string>();
  const portHex = port.toString(16).toUpperCase().padStart(4, "0");
  for (const table of tables) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const localPort = cols[1]!.split(":").pop();
      if (localPort === portHex && cols[3] === "0A") inodes.add(cols[9]!);
    }
  }
  return inodes;
}

/**
 * Who holds a listening port: scans /proc/<pid>/fd for the socket inode. Processes of other
 * users are unreadable without privileges and are skipped; the caller reports what it found
 * and never kills anything on the strength of it.
 */
export function findPortHolders(port: number): PortHolder[] {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return [];
  const wanted = new Set([...inodes].map((inode) => `socket:[${inode}]`));
  const holders: PortHolder[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (wanted.has(target)) {
        holders.push({ pid: Number(entry), command: commandLine(Number(entry)) });
        break;
      }
    }
  }
  return holders;
}

function commandLine(pid: number): string {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ").replace(/\s+/g, " ");
    return text || readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/** Names the holder of the port a `port.in_use` signal is about, on the signal itself. */
export function describePortHolder(signal: { title: string; fields: Record<string, string | number | boolean> }): void {
  const port = Number(signal.fields.port);
  if (!Number.isInteger(port) || port <= 0) return;
  const holders = findPortHolders(port);
  if (holders.length === 0) {
    signal.title = `Port ${port} in use (holder not visible to agentd)`;
    return;
  }
  const holder = holders[0]!;
  signal.fields.holder_pid = holder.pid;
  signal.fields.holder_command = holder.command.slice(0, 200);
  signal.title = `Port ${port} in use by pid ${holder.pid} (${holder.command.slice(0, 80)})`;
}
