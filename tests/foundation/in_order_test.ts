/**
 * inOrder (domain/concurrency.ts): work started together answers as if it
 * had run one after another: every result in the order given, or the
 * failure of the first to fail in that order (not the first in time), and
 * only once everything has settled.
 */
import assert from "node:assert/strict";
import { inOrder } from "../../domain/concurrency.ts";

const after = <T>(ms: number, settle: () => T) =>
  new Promise<T>((resolve, reject) =>
    setTimeout(() => {
      try {
        resolve(settle());
      } catch (error) {
        reject(error);
      }
    }, ms)
  );

Deno.test("inOrder answers every result in the order given, plain values among them", async () => {
  const [a, b, c] = await inOrder([after(20, () => "a"), 2, after(1, () => ({ c: true }))]);
  assert.deepEqual([a, b, c], ["a", 2, { c: true }]);
});

Deno.test("inOrder fails with the first failure in the order given, after everything settled", async () => {
  let lastSettled = false;
  const first = after(30, () => {
    throw new Error("the first in order");
  });
  const sooner = after(1, () => {
    throw new Error("the first in time");
  });
  const slowest = after(60, () => {
    lastSettled = true;
    return "done";
  });
  await assert.rejects(inOrder([first, sooner, slowest]), /the first in order/);
  assert.ok(lastSettled, "nothing is still running when it throws");
});
