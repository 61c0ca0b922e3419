import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// Issue 13's last hole: a command that detaches from agentd's process tree (a double fork, `( … & )`,
// setsid, nohup after its terminal closed) must still be the agent. The supervisor is a child
// subreaper, so such a process is re-parented to it instead of init: it cannot decide approvals nor
// open a terminal without no_new_privs, not after a worker restart either, and it does not outlive
// agentd. Every probe runs for real under the compiled binary.

let daemon: DaemonProcess;
let work: string;
let dataDir: string;
let supervisorPid = 0;

// Waits `delay` seconds (so the terminal that started it is gone), then asks for a decision and for a
// privileged terminal on whatever URL agentd listens on now; writes both answers to `out`.
const ATTACK = `
import array, json, os, socket, sys, time, urllib.request, urllib.error
args = sys.argv[1:]
inflight = "--inflight" in args
leader_exits = "--leader-exits" in args
args = [a for a in args if a not in ("--inflight", "--leader-exits")]
if args[0] == "--daemonize":
    args = args[1:]
    if os.fork(): sys.exit(0)
    os.setsid()
    if os.fork(): os._exit(0)
out, delay, data_dir = args[0], float(args[1]), args[2]
open(out + ".ready", "w").close()
time.sleep(delay)
url = json.load(open(os.path.join(data_dir, "ready.json")))["url"]
def post_plain(path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return [response.status, response.read().decode()]
    except urllib.error.HTTPError as error:
        return [error.code, error.read().decode()]
def post_inflight(path, body):
    # The request leaves corked, after its socket has been handed to a socketpair and closed here:
    # while agentd looks, no process holds the socket, it is in flight in an SCM_RIGHTS message.
    host, port = url.split("//")[1].split(":")
    data = json.dumps(body).encode()
    head = "POST %s HTTP/1.1\\r\\nHost: %s:%s\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % (path, host, port, len(data))
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    s.sendall(head.encode() + data)
    a, b = socket.socketpair()
    fd = s.detach()
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    os.close(fd)
    time.sleep(1)
    _, ancillary, _, _ = b.recvmsg(1, socket.CMSG_LEN(4))
    back = socket.socket(fileno=array.array("i", ancillary[0][2][:4])[0])
    back.settimeout(10)
    answer = b""
    while True:
        chunk = back.recv(65536)
        if not chunk: break
        answer += chunk
    head, _, rest = answer.partition(b"\\r\\n\\r\\n")
    return [int(head.split(b" ")[1]), rest.decode()]
post = post_inflight if inflight else post_plain
marker = os.path.join(os.path.dirname(os.path.abspath(out)), "direct-" + os.path.basename(out))
def attack():
    result = {
        "ppid": os.getppid(),
        "approval": post("/api/approvals/ap_none", {"decision": "allow_once"}),
        "privileged": post("/api/pty/privileged", {}),
        "pty": post("/api/pty", {"cmd": "touch " + marker}),
        "files": post("/api/files/write", {"path": marker, "content": "x"}),
        "session": post("/api/sessions", {"policy": {"sudo": "allow", "exec": "allow"}}),
    }
    open(out + ".tmp", "w").write(json.dumps(result))
    os.rename(out + ".tmp", out)
if leader_exits:
    # Only the first thread exits (SYS_exit, not exit_group): /proc/<pid>/fd is then empty while
    # the other thread makes the requests.
    import ctypes, threading
    threading.Thread(target=lambda: (time.sleep(0.3), attack(), os._exit(0))).start()
    ctypes.CDLL(None).syscall(93 if os.uname().machine == "aarch64" else 60, 0)
attack()
`;

interface AttackResult {
  ppid: number;
  approval: [number, string];
  privileged: [number, string];
  /** Calls that would act past the approval policy. */
  pty: [number, string];
  files: [number, string];
  /** A session with a policy of its own choosing. */
  session: [number, string];
}

const waitForFile = (path: string) => `while [ ! -e ${path} ]; do sleep 0.05; done`;

async function runInTerminal(cmd: string): Promise<void> {
  const opened = await api<{ session_id?: string; exit_code?: number | null }>(daemon.url, "/api/pty", {
    body: { cmd, workdir: work, yield_time_ms: 2000 },
  });
  // The command itself returns at once: what it left behind is what is tested.
  expect(opened.exit_code).toBe(0);
}

async function attackResult(name: string, timeoutMs = 20_000): Promise<AttackResult> {
  const path = join(work, name);
  return waitFor(`${name} to be written`, () => (existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as AttackResult) : undefined), {
    timeoutMs,
  });
}

function expectRefused(result: AttackResult): void {
  expect(result.approval[0]).toBe(403);
  expect(JSON.parse(result.approval[1]).error.code).toBe("approver_is_agent");
  expect(result.privileged[0]).toBe(403);
  expect(JSON.parse(result.privileged[1]).error.code).toBe("approver_is_agent");
  expect(result.session[0]).toBe(403);
  expect(JSON.parse(result.session[1]).error.code).toBe("approver_is_agent");
  for (const direct of [result.pty, result.files]) {
    expect(direct[0]).toBe(403);
    expect(JSON.parse(direct[1]).error.code).toBe("agent_direct_call");
  }
}

/** The supervisor's children as pid → state letter (R, S, Z…). */
function childrenOf(pid: number): Map<number, string> {
  const children = new Map<number, string>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let listed = "";
    try {
      listed = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8");
    } catch {
      continue;
    }
    for (const child of listed.split(" ").filter(Boolean).map(Number)) {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, "utf8");
        children.set(child, stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
      } catch {
        // Reaped while we looked.
      }
    }
  }
  return children;
}

/** Processes whose command line starts with `prefix`. */
function processesRunning(prefix: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").startsWith(prefix);
      } catch {
        return false;
      }
    });
}

beforeAll(async () => {
  dataDir = makeTempDir("agentd-detached-data-");
  work = makeTempDir("agentd-detached-work-");
  writeFileSync(join(work, "attack.py"), ATTACK);
  daemon = await startDaemon({ dataDir, config: { providers: [] } });
  supervisorPid = daemon.proc.pid;
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  for (const pid of processesRunning("sleep 313.271")) process.kill(pid, "SIGKILL");
  removeTempDirs();
});

describe("a command that leaves agentd's process tree is still the agent", () => {
  test("a person is not refused: 404 for an unknown approval, 400 for an empty privileged call, a terminal and a file", async () => {
    await api(daemon.url, "/api/approvals/ap_none", { body: { decision: "allow_once" }, expect: 404 });
    await api(daemon.url, "/api/pty/privileged", { body: {}, expect: 400 });
    await api(daemon.url, "/api/pty", { body: { cmd: "true" } });
    await api(daemon.url, "/api/files/write", { body: { path: join(work, "by-a-person"), content: "x" } });
    await api(daemon.url, "/api/sessions", { body: { policy: { sudo: "allow" } }, expect: 201 });
    expect(readFileSync(join(work, "by-a-person"), "utf8")).toBe("x");
  });

  // Each form leaves agentd's process group (a group is ended with the terminal); the terminal waits
  // until the detached process says it runs, then exits.
  test.each([
    ["in the foreground (the control case)", "python3 attack.py %OUT% 0 %DATA%"],
    ["setsid -f", "setsid -f python3 attack.py %OUT% 1 %DATA%"],
    ["a background subshell that calls setsid: ( setsid … & )", "(setsid python3 attack.py %OUT% 1 %DATA% &)"],
    ["a job-control group: set -m; … &", "set -m; nohup python3 attack.py %OUT% 1 %DATA% >/dev/null 2>&1 &"],
    ["a double fork with setsid between", "python3 attack.py --daemonize %OUT% 1 %DATA%"],
    ["its socket in flight (SCM_RIGHTS), held by no process while agentd looks", "setsid -f python3 attack.py --inflight %OUT% 0 %DATA%"],
    ["its first thread gone, another thread holding the socket", "setsid -f python3 attack.py --leader-exits %OUT% 0 %DATA%"],
  ])(
    "%s: decisions get 403 approver_is_agent, direct calls 403 agent_direct_call",
    async (name, template) => {
      const out = `out-${Math.random().toString(36).slice(2)}.json`;
      await runInTerminal(`${template.replaceAll("%OUT%", out).replaceAll("%DATA%", dataDir)}\n${waitForFile(`${out}.ready`)}`);
      const result = await attackResult(out);
      expectRefused(result);
      // Adopted by the supervisor, not by init.
      if (!name.includes("control")) expect(result.ppid).toBe(supervisorPid);
    },
    30_000,
  );

  test("adopted processes are reaped: no zombie is left under the supervisor", async () => {
    await runInTerminal("setsid -f sleep 0.2; set -m; sleep 0.3 & true");
    await waitFor(
      "the adopted processes to end and be reaped",
      () => {
        const states = [...childrenOf(supervisorPid).values()];
        return states.length > 0 && !states.includes("Z") && states.length === 1 ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    // Only the worker is left.
    expect([...childrenOf(supervisorPid).keys()]).toEqual([daemon.workerPid()]);
  }, 30_000);

  test("still refused after the worker it came from was killed and replaced", async () => {
    await runInTerminal(`setsid -f python3 attack.py after-restart.json 4 ${dataDir}; ${waitForFile("after-restart.json.ready")}`);
    await daemon.killWorker();
    expectRefused(await attackResult("after-restart.json", 30_000));
  }, 60_000);

  test("nothing the agent left behind outlives agentd", async () => {
    // The terminal waits until both run: `setsid -f` returns before its child has left the terminal's group.
    await runInTerminal(
      'setsid -f sleep 313.271; set -m; sleep 313.271 &\nwhile [ "$(pgrep -c -f "^sleep 313.271")" -lt 2 ]; do sleep 0.05; done',
    );
    const sleeps = processesRunning("sleep 313.271");
    expect(sleeps.length).toBe(2);
    await daemon.stop();
    expect(sleeps.filter(isProcessAlive)).toEqual([]);
    expect(daemon.lines.find((r) => r.event === "process.orphans_ended")?.pids).toEqual(expect.arrayContaining(sleeps));
  }, 60_000);
});
