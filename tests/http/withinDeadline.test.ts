import { expect, test } from "bun:test";
import { withinDeadline } from "../../src/http/requestBody.ts";

test("a body read within its deadline is handed to andThen, whose throw becomes the rejection", async () => {
  expect(await withinDeadline(Promise.resolve("{}"), 1_000, (text) => text.length)).toBe(2);
  await expect(
    withinDeadline(Promise.resolve("x"), 1_000, () => {
      throw new Error("not JSON");
    }),
  ).rejects.toThrow("not JSON");
});

test("a body that comes after its deadline is refused with request_timeout and never parsed", async () => {
  const late = Promise.withResolvers<string>();
  let parsed = 0;
  const reading = withinDeadline(late.promise, 10, () => ++parsed);
  await expect(reading).rejects.toMatchObject({ code: "request_timeout" });
  late.resolve("{}");
  await late.promise;
  await Bun.sleep(0);
  expect(parsed).toBe(0);
});
