import { describe, expect, test } from "bun:test";
import { Redactor, redactText } from "../../../src/core/redaction/index.ts";

describe("Redactor", () => {
  test("hides the exact secrets agentd holds, then anything key-shaped", () => {
    const redactor = new Redactor(["my-provider-key-123", undefined, "short"]);
    const line =
      '{"event":"upstream.error","api_key":"abc123xyz","message":"key my-provider-key-123 rejected","auth":"Authorization: Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"}';
    const out = redactor.redact(line);
    expect(out).not.toContain("my-provider-key-123");
    expect(out).not.toContain("abc123xyz");
    expect(out).not.toContain("eyJhbGciOi");
    expect(out).toContain('"event":"upstream.error"');
    // Secrets shorter than 6 characters are too likely to be ordinary words.
    expect(redactor.redact("a short answer")).toBe("a short answer");
  });
});

test("a secret-looking assignment never swallows the command after a shell operator", () => {
  expect(redactText("TOKEN=x;sudo -n /usr/bin/id")).toBe("TOKEN=[redacted];sudo -n /usr/bin/id");
  expect(redactText(`echo 'API_KEY="'; sudo -n id > pwned; echo '"'`)).toContain("sudo -n id > pwned");
  expect(redactText("TOKEN=abc&&sudo id")).toBe("TOKEN=[redacted]&&sudo id");
  expect(redactText('export API_KEY="sk-abc def"')).toBe("export API_KEY=[redacted]");
});
