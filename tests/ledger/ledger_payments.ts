/**
 * The payment half of the ledger model, against real chain software: one
 * anvil node with Arbitrum One's chain id and a 6-decimal USDT, shared by
 * every case. Instructions are asked for through the partner API, transfers
 * are made by a real wallet, and they are credited by the partner's
 * confirmation or by the payments job (checks, the Transfer-log scan,
 * finality), whichever comes first; a confirmation is sometimes sent again,
 * or names another instruction's transfer, and a reorg sometimes takes the
 * newest transfers away again.
 */
import fc from "fast-check";
import type { Hex } from "viem";
import { runPayments } from "../../jobs/payments.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { startChain, type TestChain } from "../_helpers/evm/chain.ts";
import { ik } from "../setup/setup_fixture.ts";

const RECIPIENT = "0x00000000000000000000000000000000000fee01";
const PAYER = 1;

export interface PaymentChain {
  chain: TestChain;
  usdt: Hex;
  payer: Hex;
}

/** The chain every case pays on, its token minted to the payer. */
export async function startPaymentChain(): Promise<PaymentChain> {
  const chain = await startChain(42161);
  const usdt = await chain.deployToken("USDT", 6);
  const payer = chain.wallet(PAYER).address;
  await chain.mint(usdt, payer, 10n ** 15n);
  // Blocks under everything the cases do, so a reorg never reaches the token's deployment.
  await chain.mine(10);
  return { chain, usdt, payer };
}

/** A service configured to verify payments on that chain, its recipient set. */
export async function startPayingEnv(payments: PaymentChain): Promise<TestEnv> {
  const env = await startTestEnv({
    env: {
      EVM_RPC_ARBITRUM: payments.chain.url,
      EVM_TOKENS: JSON.stringify({ arbitrum: { USDT: payments.usdt } }),
      EVM_CONFIRMATIONS: JSON.stringify({ arbitrum: 1, bnb: 3 }),
    },
  });
  await expectJson(
    await operator(env, "PUT", "/operator/v1/payment-recipients/arbitrum", { address: RECIPIENT }),
    200,
  );
  return env;
}

export interface PaymentModel {
  env: TestEnv;
  partner: TestPartner;
  payments: PaymentChain;
  /** Instructions asked for, with the transfer made for each (one at most). */
  instructions: { paymentId: string; tokenAmount: bigint; txHash: Hex | null }[];
  expected: { received: Map<string, bigint> };
}

export type PaymentStep =
  | { kind: "instruct"; obligation: number }
  | { kind: "pay"; instruction: number; how: "exact" | "over" | "under"; confirm: boolean }
  | { kind: "confirmAgain"; instruction: number; hashOf: number }
  | { kind: "paymentsJob" }
  | { kind: "reorg"; depth: number };

export const paymentSteps = [
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("instruct" as const), obligation: fc.nat(3) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("pay" as const),
      instruction: fc.nat(5),
      how: fc.constantFrom("exact" as const, "exact" as const, "over" as const, "under" as const),
      confirm: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("confirmAgain" as const), instruction: fc.nat(5), hashOf: fc.nat(5) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("paymentsJob" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reorg" as const), depth: fc.integer({ min: 1, max: 3 }) }) },
];

export async function runPaymentStep(world: PaymentModel, step: PaymentStep): Promise<void> {
  const { instructions } = world;
  const pick = <T>(list: T[], index: number) => list.length ? list[index % list.length] : undefined;
  switch (step.kind) {
    case "instruct":
      await instruct(world, step.obligation);
      return;
    case "pay": {
      // An instruction not paid yet; without one, the client asks for one first (the common flow).
      const unpaid = instructions.filter((instruction) => !instruction.txHash);
      const instruction = pick(unpaid, step.instruction) ?? await instruct(world, step.instruction);
      if (!instruction) return;
      const amount = instruction.tokenAmount + { exact: 0n, over: 1_230_000n, under: -1n }[step.how];
      const { chain, usdt } = world.payments;
      instruction.txHash = await chain.transfer(usdt, PAYER, RECIPIENT, amount);
      world.expected.received.set(instruction.txHash, amount);
      if (step.confirm) await confirm(world, instruction.paymentId, instruction.txHash);
      return;
    }
    case "confirmAgain": {
      // The same confirmation sent again, or another instruction's transfer named: never a second credit.
      const instruction = pick(instructions, step.instruction);
      const hash = pick(instructions, step.hashOf)?.txHash;
      if (instruction && hash) await confirm(world, instruction.paymentId, hash);
      return;
    }
    case "paymentsJob":
      await runPayments(world.env.deps);
      return;
    case "reorg": {
      // The newest blocks replaced by empty ones: a transfer credited there is gone, and the job reverses it.
      const { chain } = world.payments;
      await chain.reorg(step.depth);
      // anvil's clock falls behind the wall clock at each reorg; thousands of cases later every transfer would be
      // dated before its instruction (PAYMENT_TX_TOO_OLD). The next block is dated now again.
      // (Only when it is behind: a next block dated ahead of the wall clock makes anvil hold transfers back.)
      const { timestamp } = await chain.client.getBlock({ blockTag: "latest" });
      const now = Math.floor(Date.now() / 1000);
      if (now > Number(timestamp) + 1) {
        await chain.setNextBlockTime(now);
        await chain.mine(1);
      }
      await runPayments(world.env.deps);
      return;
    }
  }
}

/** An instruction for one of the client's open obligations (none open: none). */
async function instruct(world: PaymentModel, index: number) {
  const open = (await expectJson(await world.partner.call("GET", "/v1/users/ana/obligations"), 200)).obligations
    .filter((obligation: { status: string }) => obligation.status === "OPEN");
  if (!open.length) return undefined;
  const { obligationId } = open[index % open.length];
  const answer = await expectJson(
    await world.partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
      body: { networkId: "arbitrum", token: "USDT", payerAddress: world.payments.payer },
      headers: ik(),
    }),
    200,
  );
  const instruction = {
    paymentId: answer.payment.paymentId,
    tokenAmount: BigInt(answer.payment.tokenAmount),
    txHash: null,
  };
  world.instructions.push(instruction);
  return instruction;
}

/** A partner's confirmation: whatever it answers (credited, not yet, or refused), never a server error. */
async function confirm(world: PaymentModel, paymentId: string, txHash: Hex) {
  const response = await world.partner.call("POST", `/v1/users/ana/payments/${paymentId}/confirm`, {
    body: { txHash },
    headers: ik(),
  });
  await response.body?.cancel();
  if (response.status >= 500) throw new Error(`confirm answered ${response.status}`);
}
