import type { StatusSnapshot } from "./statusSnapshot.ts";
import { formatUptime } from "./statusText.ts";

/** The browser view; hono/jsx escapes every value. */
export function StatusPage({ snapshot }: { snapshot: StatusSnapshot }) {
  const { health, worker } = snapshot;
  const checks = Object.entries(health.checks).flatMap(([key, list]) => list.map((check) => ({ key, ...check })));
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>agentd — {health.status}</title>
      </head>
      <body>
        <h1>
          agentd {worker.version}: <span class={`status-${health.status}`}>{health.status}</span>
        </h1>
        <section>
          <h2>Worker</h2>
          <p>
            pid {worker.pid}, up {formatUptime(worker.uptime_s)}, restarts {worker.restarts}, memory {worker.memory_mb} MB
          </p>
        </section>
        <section>
          <h2>Checks</h2>
          <table>
            <tbody>
              {checks.map((check) => (
                <tr>
                  <td>{check.key}</td>
                  <td>{check.status}</td>
                  <td>{check.observedValue === undefined ? "" : `${check.observedValue} ${check.observedUnit ?? ""}`}</td>
                  <td>{check.output ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        {health.notes.length > 0 && (
          <section>
            <h2>Notes</h2>
            <ul>
              {health.notes.map((note) => (
                <li>{note}</li>
              ))}
            </ul>
          </section>
        )}
      </body>
    </html>
  );
}
