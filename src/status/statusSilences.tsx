import { Card, SectionBody } from "./statusCard.tsx";
import { formatTime, formatUptime } from "./statusFormat.ts";
import { EMPTY_TEXT } from "./statusSections.ts";
import type { SilenceRow, StatusSection } from "./statusSnapshot.ts";

/** Maintenance silences in force: what the watchdog does not report, and until when. */
export function SilencesCard({ data, now }: { data: StatusSection<SilenceRow>; now: number }) {
  return (
    <Card name="silences" summary={data.configured ? `${data.rows.length} in force` : undefined}>
      <SectionBody section={data} empty={EMPTY_TEXT.silences}>
        <table>
          <thead>
            <tr>
              <th>Target</th>
              <th>Ends</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((silence) => (
              <tr>
                <td>
                  <code>{silence.target}</code>
                </td>
                <td>
                  <time datetime={new Date(silence.until).toISOString()}>{formatTime(silence.until)}</time>{" "}
                  <span class="note">(in {formatUptime((silence.until - now) / 1000)})</span>
                </td>
                <td class="text">{silence.reason ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </SectionBody>
    </Card>
  );
}
