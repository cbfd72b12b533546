import assert from "node:assert/strict";
import { encode } from "@msgpack/msgpack";
import { bytesToHex } from "@noble/hashes/utils.js";
import { hashDomain, hashTypedData, keccak256, toHex } from "viem";
import {
  addressFromPrivateKey,
  approveAgentAction,
  approveBuilderFeeAction,
  generateAgentKey,
  type Hex,
  l1ActionHash,
  l1TypedData,
  percentToTenthsBps,
  recoverL1ActionSigner,
  recoverUserSignedActionSigner,
  signL1Action,
  signUserSignedAction,
  tenthsBpsToPercent,
  usdSendAction,
  userSignedTypedData,
} from "../../venues/venue_b/signing.ts";

// The published key of the venue SDK's signing tests (facts file §8.1).
const KEY: Hex = "0x0123456789012345678901234567890123456789012345678901234567890123";
const KEY_ADDRESS = "0x14791697260e4c9a71f18484c9f997b308e59325";
const BUILDER = "0x1111111111111111111111111111111111111111";
const AGENT = "0x2222222222222222222222222222222222222222";
const PLATFORM = "0x3333333333333333333333333333333333333333";
const NONCE = 1700000000000;

/** r/s compared as numbers: the Python SDK's published values are not zero-padded. */
function assertSignature(actual: { r: string; s: string; v: number }, r: string, s: string, v: number) {
  assert.equal(BigInt(actual.r), BigInt(r), "r");
  assert.equal(BigInt(actual.s), BigInt(s), "s");
  assert.equal(actual.v, v, "v");
  assert.equal(actual.r.length, 66, "r is zero-padded like the TypeScript SDK");
  assert.equal(actual.s.length, 66, "s is zero-padded like the TypeScript SDK");
}

const vector2Order = { a: 1, b: true, p: "100", s: "100", r: false, t: { limit: { tif: "Gtc" } } };

Deno.test("signing reproduces the published phantom-agent connectionId (vector 1)", () => {
  const action = {
    type: "order",
    orders: [{ a: 4, b: true, p: "1670.1", s: "0.0147", r: false, t: { limit: { tif: "Ioc" } } }],
    grouping: "na",
  };
  assert.equal(
    l1ActionHash({ action, nonce: 1677777606040 }),
    "0x0fcbeda5ae3c4950a548021552a4fea2226858c4453571bf3f24ba017eac2908",
  );
});

Deno.test("signing reproduces the published order vectors on mainnet and testnet (vector 2)", () => {
  const action = { type: "order", orders: [vector2Order], grouping: "na" };
  assert.equal(
    bytesToHex(encode(action)),
    "83a474797065a56f72646572a66f72646572739186a16101a162c3a170a3313030a173a3313030a172c2a17481a56c696d697481a3746966a3477463a867726f7570696e67a26e61",
  );
  assert.equal(
    l1ActionHash({ action, nonce: 0 }),
    "0x884f2c32bb6dbdd65f6033e32fb28c0cb6f5b345db0f6471fd3366d85c9252c1",
  );
  assertSignature(
    signL1Action(KEY, { action, nonce: 0, isMainnet: true }),
    "0xd65369825a9df5d80099e513cce430311d7d26ddf477f5b3a33d2806b100d78e",
    "0x2b54116ff64054968aa237c20ca9ff68000f977c93289157748a3162b6ea940e",
    28,
  );
  assertSignature(
    signL1Action(KEY, { action, nonce: 0, isMainnet: false }),
    "0x82b2ba28e76b3d761093aaded1b1cdad4960b3af30212b343fb2e6cdfa4e3d54",
    "0x6b53878fc99d26047f4d7e8c90eb98955a109f44209163f52d8dc4278cbbd9f5",
    27,
  );
  const withCloid = {
    type: "order",
    orders: [{ ...vector2Order, c: "0x00000000000000000000000000000001" }],
    grouping: "na",
  };
  assertSignature(
    signL1Action(KEY, { action: withCloid, nonce: 0, isMainnet: true }),
    "0x41ae18e8239a56cacbc5dad94d45d0b747e5da11ad564077fcac71277a946e3",
    "0x3c61f667e747404fe7eea8f90ab0e76cc12ce60270438b2058324681a00116da",
    27,
  );
  const trigger = {
    type: "order",
    orders: [{ ...vector2Order, t: { trigger: { isMarket: true, triggerPx: "103", tpsl: "sl" } } }],
    grouping: "na",
  };
  assertSignature(
    signL1Action(KEY, { action: trigger, nonce: 0, isMainnet: true }),
    "0x98343f2b5ae8e26bb2587daad3863bc70d8792b09af1841b6fdd530a2065a3f9",
    "0x6b5bb6bb0633b710aa22b721dd9dee6d083646a5f8e581a20b545be6c1feb405",
    27,
  );
});

Deno.test("signing encodes integers above 2^32 as u64 and hashes the vault address (vector 3)", () => {
  const action = { type: "dummy", num: 100000000000 };
  assertSignature(
    signL1Action(KEY, { action, nonce: 0, isMainnet: true }),
    "0x53749d5b30552aeb2fca34b530185976545bb22d0b3ce6f62e31be961a59298",
    "0x755c40ba9bf05223521753995abb2f73ab3229be8ec921f350cb447e384d8ed8",
    27,
  );
  assertSignature(
    signL1Action(KEY, {
      action,
      nonce: 0,
      isMainnet: true,
      vaultAddress: "0x1719884eb866cb12b2287399b15f7db5e7d775ea",
    }),
    "0x3c548db75e479f8012acf3000ca3a6b05606bc2ec0c29c50c515066a326239",
    "0x4d402be7396ce74fbba3795769cda45aec00dc3125a984f2a9f23177b190da2c",
    28,
  );
});

Deno.test("signing reproduces the scheduleCancel vectors with and without time (vector 4)", () => {
  assertSignature(
    signL1Action(KEY, { action: { type: "scheduleCancel" }, nonce: 0, isMainnet: true }),
    "0x6cdfb286702f5917e76cd9b3b8bf678fcc49aec194c02a73e6d4f16891195df9",
    "0x6557ac307fa05d25b8d61f21fb8a938e703b3d9bf575f6717ba21ec61261b2a0",
    27,
  );
  assertSignature(
    signL1Action(KEY, { action: { type: "scheduleCancel", time: 123456789 }, nonce: 0, isMainnet: true }),
    "0x609cb20c737945d070716dcc696ba030e9976fcf5edad87afa7d877493109d55",
    "0x16c685d63b5c7a04512d73f183b3d7a00da5406ff1f8aad33f8ae2163bab758b",
    28,
  );
});

Deno.test("signing reproduces the published testnet usdSend vector (vector 5)", () => {
  const action = usdSendAction({
    isMainnet: false,
    signatureChainId: "0x66eee",
    destination: "0x5e9ee1089755c3435139848e47e6635505d5a13a",
    amount: "1",
    time: 1687816341423,
  });
  const signed = signUserSignedAction(KEY, action);
  assertSignature(
    signed.signature,
    "0x637b37dd731507cdd24f46532ca8ba6eec616952c56218baeff04144e4a77073",
    "0x11a6a24900e6e314136d2592e2f8d502cd89b7c15b198e1bee043c9589f9fad7",
    27,
  );
  assert.equal(signed.nonce, 1687816341423);
  assert.equal(recoverUserSignedActionSigner(signed), KEY_ADDRESS);
});

Deno.test("signing reproduces the SDK order with builder and cloid, its testnet and expiresAfter variants (8.2a)", () => {
  const action = {
    type: "order",
    orders: [{
      a: 0,
      b: true,
      p: "65000",
      s: "0.001",
      r: false,
      t: { limit: { tif: "Gtc" } },
      c: "0x0000000000000000000000000000000a",
    }],
    grouping: "na",
    builder: { b: BUILDER, f: 10 },
  };
  assert.equal(
    bytesToHex(encode(action)),
    "84a474797065a56f72646572a66f72646572739187a16100a162c3a170a53635303030a173a5302e303031a172c2a17481a56c696d697481a3746966a3477463a163d92230783030303030303030303030303030303030303030303030303030303030303061a867726f7570696e67a26e61a76275696c64657282a162d92a307831313131313131313131313131313131313131313131313131313131313131313131313131313131a1660a",
  );
  const connectionId = l1ActionHash({ action, nonce: NONCE });
  assert.equal(connectionId, "0x818f0f62539e93c82ca0733b55479b33ba5aef3b38c8ab650ac309f4159e82d8");
  assert.equal(
    hashTypedData(l1TypedData(connectionId, true)),
    "0x02f884285923af2071ff8323fb2ef096ee1f4735c9c6f00aad68e49469de51a8",
  );
  const signature = signL1Action(KEY, { action, nonce: NONCE, isMainnet: true });
  assert.deepEqual(signature, {
    r: "0x342ed50c33003feb8135aabaa36c571a7203fba5789bda47867d4643a1d19761",
    s: "0x25f9d3774ca8b06e5bfdf879ab4b5264dbe318859fe8bd920e00162cbea4a0fb",
    v: 27,
  });
  assert.equal(recoverL1ActionSigner({ action, nonce: NONCE, isMainnet: true, signature }), KEY_ADDRESS);
  assertSignature(
    signL1Action(KEY, { action, nonce: NONCE, isMainnet: false }),
    "0x621a5f27cb39c5da89f926534db5956ca8cf945b8ba39995cd47f70e6590c753",
    "0x154f12b2f6f17e9b6dae248f08d4c14000c9967b9f7d99e86b115e4594a2b140",
    27,
  );
  assert.equal(
    l1ActionHash({ action, nonce: NONCE, expiresAfter: 1700000060000 }),
    "0x3090d04e6093134f322b916ed166d071e7d5d3d621ee11fbad499adc50682a2f",
  );
  assertSignature(
    signL1Action(KEY, { action, nonce: NONCE, isMainnet: true, expiresAfter: 1700000060000 }),
    "0xd5044887ab7849549c84adea6d2938795adb1e91ead60881a994cf99d781c41f",
    "0x7ad698dc484ba54ac304483e0bfecdb9267aad59005159393850ee9539664b6a",
    28,
  );
});

Deno.test("signing hashes key order, trailing zeros and hex case into the signer (pitfalls of 8.2a)", () => {
  const reordered = { type: "order", grouping: "na", orders: [vector2Order] };
  assert.match(l1ActionHash({ action: reordered, nonce: 0 }), /^0xcecdd6bf.*1717$/);
  const trailingZero = { type: "order", orders: [{ ...vector2Order, p: "100.0" }], grouping: "na" };
  assert.match(l1ActionHash({ action: trailingZero, nonce: 0 }), /^0xf1c73139.*2b62$/);
  const builderOrder = (b: string) => ({
    type: "order",
    orders: [vector2Order],
    grouping: "na",
    builder: { b, f: 10 },
  });
  const lower = l1ActionHash({ action: builderOrder(`0xabcdefabcdef${"0".repeat(28)}`), nonce: NONCE });
  const upper = l1ActionHash({ action: builderOrder(`0xABCDEFabcdef${"0".repeat(28)}`), nonce: NONCE });
  assert.notEqual(lower, upper);
});

Deno.test("signing reproduces approveBuilderFee on mainnet and testnet (8.2b)", () => {
  const action = approveBuilderFeeAction({ isMainnet: true, builder: BUILDER, maxFeeTenthsBps: 10, nonce: NONCE });
  assert.deepEqual(action, {
    type: "approveBuilderFee",
    signatureChainId: "0xa4b1",
    hyperliquidChain: "Mainnet",
    maxFeeRate: "0.01%",
    builder: BUILDER,
    nonce: NONCE,
  });
  assert.equal(
    hashTypedData(userSignedTypedData(action)),
    "0x6c135757a64f1e21523fa7169090e3df1cbcabb9a452d8a9bb8d714b7a7ae7f4",
  );
  const signed = signUserSignedAction(KEY, action);
  assert.deepEqual(signed.signature, {
    r: "0x9ee96783fe521918a8614fe105a6e0a0ed6b6a4ff33f96c00095586c867c3051",
    s: "0x09ad78ccf00cd79292b227b0118af905b2b4db31d37251e4105cdbc7c620a0f4",
    v: 28,
  });
  assert.equal(recoverUserSignedActionSigner(signed), KEY_ADDRESS);
  const testnet = approveBuilderFeeAction({
    isMainnet: false,
    signatureChainId: "0x66eee",
    builder: BUILDER,
    maxFeeTenthsBps: 1,
    nonce: NONCE,
  });
  assert.equal(testnet.maxFeeRate, "0.001%");
  assertSignature(
    signUserSignedAction(KEY, testnet).signature,
    "0xf491a30ac2104a9a0efa824fe63fca161b0cffb249473c8f31423d0f2aaa39ac",
    "0x38157c88b30a1db86d4ad12a7085b0bae69aee8f0fc6c4c9a2e53aa8ac0b824e",
    27,
  );
});

Deno.test("signing reproduces approveAgent named and unnamed (8.2c)", () => {
  const named = signUserSignedAction(
    KEY,
    approveAgentAction({ isMainnet: true, agentAddress: AGENT, agentName: "svc", nonce: NONCE }),
  );
  assertSignature(
    named.signature,
    "0x35e9fe638120830ac233f0ff33682897988fa4dd92ca728e7749413b37a20775",
    "0x49e291182b83cd9768bc833b29aa8370d5cf56047c91590947a01c0ba7165d3b",
    27,
  );
  const unnamedAction = approveAgentAction({ isMainnet: true, agentAddress: AGENT, nonce: NONCE });
  assert.equal(unnamedAction.agentName, "");
  const unnamed = signUserSignedAction(KEY, unnamedAction);
  assertSignature(
    unnamed.signature,
    "0x6f477f1f3cfa9d2afddf498ec544ffd81c463b88ce8d9f697d99a87d46700bd0",
    "0x1c003f2c8d51177f5622bc9c190c1b992c99925d774b6fad74c81b1483657a74",
    28,
  );
  // The Python SDK drops an empty agentName from the wire; it is still signed as "".
  const { agentName: _dropped, ...withoutName } = unnamed.action;
  assert.equal(
    recoverUserSignedActionSigner({ ...unnamed, action: withoutName as typeof unnamed.action }),
    KEY_ADDRESS,
  );
  assert.equal(
    approveAgentAction({
      isMainnet: true,
      agentAddress: AGENT,
      agentName: "svc",
      validUntil: 1767776120478,
      nonce: NONCE,
    })
      .agentName,
    "svc valid_until 1767776120478",
  );
});

Deno.test("signing reproduces usdSend and keeps destination and amount case- and zero-sensitive (8.2d)", () => {
  const action = usdSendAction({ isMainnet: true, destination: PLATFORM, amount: "25.50", time: NONCE });
  assert.equal(action.amount, "25.5");
  const digest = (a: Record<string, unknown>) => hashTypedData(userSignedTypedData(a));
  assert.equal(digest(action), "0x697fc8c2bc2938cbf6d257ddb2095883032e3403aa7c41e72b286edf8053fd08");
  assert.deepEqual(signUserSignedAction(KEY, action).signature, {
    r: "0xd67f9786fa429f329692af38fce67f0def40f16a63a70f7e5946747c97a32ccc",
    s: "0x011be7b4101a5e12f9fa5b79312ce60411d5d88c5b57cced847a8f5acce9828a",
    v: 28,
  });
  const base = { ...action, destination: `0xabcdefabcdef${"0".repeat(28)}` };
  assert.match(digest(base), /^0xacceff3f.*e607$/);
  assert.match(digest({ ...base, destination: `0xABCDEFabcdef${"0".repeat(28)}` }), /^0xbb3d30f2.*be47$/);
  assert.match(digest({ ...base, amount: "25.50" }), /^0x592f5854.*e9c2$/);
});

Deno.test("signing reproduces cancel, updateLeverage, scheduleCancel and trigger vectors (8.2e)", () => {
  const cases: [unknown, string, string, number][] = [
    [
      { type: "cancel", cancels: [{ a: 0, o: 123456789 }] },
      "0xb310cce7be049df255902a1a096f2f79332c1611adcf3983151728e43c2db8a1",
      "0x313fd44c6ae32b8173269dc8597ce68e411d4ccfac3c82b73f032ad1bc52f940",
      28,
    ],
    [
      { type: "cancel", cancels: [{ a: 0, o: 287286372177 }] },
      "0x06a51e9a461d3a9c5122b3464bf3fc3edc12871bc19496042c95e4ac7fe4667b",
      "0x033a4945f9eaeeb4c86580af39c63b5fd2f8b71d96eb5eca950e6dafb0565c40",
      28,
    ],
    [
      { type: "updateLeverage", asset: 0, isCross: true, leverage: 5 },
      "0x59856938ebc8b58127a0c2bfc4bbc88f81d5faec69beefdf05beeae649054a3f",
      "0x124a9e3dcb25662880e64a23bcb8accbb2e88e8986903fa39f8847b44a96c26e",
      27,
    ],
    [
      { type: "scheduleCancel", time: 1700000060000 },
      "0x63f82e27ce8ba37e7374cd5991215dd814a032644ed03d0480b7a6902bd0194c",
      "0x17e5777edf89919c48c2999d1c591ca7fb228cf4b8341705a4a585d1c269a990",
      27,
    ],
    [
      {
        type: "order",
        orders: [{
          a: 0,
          b: false,
          p: "60000",
          s: "0.001",
          r: true,
          t: { trigger: { isMarket: true, triggerPx: "61000", tpsl: "sl" } },
        }],
        grouping: "positionTpsl",
      },
      "0xecf4fa02d787afddbe1e840e4cc5b19aa62896482d07798be49ffea817db555f",
      "0x443eb2d560ef01e38f2b2d21f866375fb924233e4c6294dd21abe218f73cc4ef",
      27,
    ],
  ];
  for (const [action, r, s, v] of cases) {
    assertSignature(signL1Action(KEY, { action, nonce: NONCE, isMainnet: true }), r, s, v);
  }
  assert.equal(
    bytesToHex(encode({ type: "scheduleCancel", time: 1700000060000 })),
    "82a474797065ae7363686564756c6543616e63656ca474696d65cf0000018bcfe65260",
  );
});

Deno.test("signing uses the published typehashes and domain separators", () => {
  const typeHash = (text: string) => keccak256(toHex(text));
  assert.equal(
    typeHash("Agent(string source,bytes32 connectionId)"),
    "0x26f05c2f7239b6983075e58321292d77b3aa173d19b27257ac96ab362570f508",
  );
  assert.equal(
    typeHash(
      "HyperliquidTransaction:ApproveAgent(string hyperliquidChain,address agentAddress,string agentName,uint64 nonce)",
    ),
    "0x4464abf6148f115d79362d98320081aa2ae8a5c840083cb65820bffc21394378",
  );
  assert.equal(
    typeHash(
      "HyperliquidTransaction:ApproveBuilderFee(string hyperliquidChain,string maxFeeRate,address builder,uint64 nonce)",
    ),
    "0x461684eab6dcdfdd79c6250648d41a1abe3c826ceab6c513fc4f30156f233ad3",
  );
  assert.equal(
    typeHash("HyperliquidTransaction:UsdSend(string hyperliquidChain,string destination,string amount,uint64 time)"),
    "0xc7410964737e2180e258d649f23f74a49460432fecbd94688103ecc63fb66b4c",
  );
  const domainTypes = {
    EIP712Domain: [
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
    ],
  } as const;
  const separator = (
    domain?: { name?: string; version?: string; chainId?: number | bigint; verifyingContract?: Hex },
  ) =>
    hashDomain({
      domain: {
        name: domain!.name!,
        version: domain!.version!,
        chainId: BigInt(domain!.chainId!),
        verifyingContract: domain!.verifyingContract!,
      },
      types: domainTypes,
    });
  assert.equal(
    separator(l1TypedData("0x00", true).domain),
    "0xd79297fcdf2ffcd4ae223d01edaa2ba214ff8f401d7c9300d995d17c82aa4040",
  );
  for (
    const [chain, expected] of [
      ["0xa4b1", "0x2f54e643b38c9c2b65cb731aaf11c54f01705ee0cdf45aea16e2ac0a5ce7531a"],
      ["0x66eee", "0xfeb1393ca4412a4ca577bd51d04f0a77033514c602f4d0a11490fb95f7428df6"],
      ["0x1", "0xdb17d1ad595c034a414294c8a640f420ba18e2b7488231f5b97d02780d8e8648"],
    ]
  ) {
    const action = usdSendAction({
      isMainnet: true,
      signatureChainId: chain as Hex,
      destination: PLATFORM,
      amount: "1",
      time: 1,
    });
    assert.equal(separator(userSignedTypedData(action).domain), expected);
  }
});

Deno.test("signing converts builder fee units and refuses rates off the 0.001% grid", () => {
  assert.equal(tenthsBpsToPercent(10), "0.01%");
  assert.equal(tenthsBpsToPercent(1), "0.001%");
  assert.equal(tenthsBpsToPercent(100), "0.1%");
  assert.equal(tenthsBpsToPercent(25), "0.025%");
  assert.equal(tenthsBpsToPercent(0), "0%");
  assert.equal(percentToTenthsBps("0.01%"), 10);
  assert.equal(percentToTenthsBps("0.1%"), 100);
  assert.equal(percentToTenthsBps("0.0005%"), null);
  assert.equal(percentToTenthsBps("0.01"), null);
});

Deno.test("signing generates agent keys whose signatures recover to the agent address", () => {
  const agent = generateAgentKey();
  assert.match(agent.privateKey, /^0x[0-9a-f]{64}$/);
  assert.equal(addressFromPrivateKey(agent.privateKey), agent.address);
  assert.equal(addressFromPrivateKey(KEY), KEY_ADDRESS);
  const action = { type: "noop" };
  const signature = signL1Action(agent.privateKey, { action, nonce: NONCE, isMainnet: true });
  assert.equal(recoverL1ActionSigner({ action, nonce: NONCE, isMainnet: true, signature }), agent.address);
  assert.notEqual(recoverL1ActionSigner({ action, nonce: NONCE + 1, isMainnet: true, signature }), agent.address);
  assert.notEqual(recoverL1ActionSigner({ action, nonce: NONCE, isMainnet: false, signature }), agent.address);
});
