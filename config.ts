/**
 * Configuration from the environment, parsed once at start (main.ts) and passed
 * down. Nothing else in the code reads the environment.
 */
import { z } from "zod";

const port = z.coerce.number().int().min(1).max(65535);

/** The EVM networks payments may use. */
export const EVM_NETWORKS = ["bnb", "arbitrum"] as const;
export type EvmNetwork = typeof EVM_NETWORKS[number];
export type EvmToken = "USDT" | "USDC";

/** A variable holding JSON that must match `schema`. */
function jsonOf<T extends z.ZodType>(schema: T, message: string) {
  return z.string().transform((text, context) => {
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data as z.infer<T>;
    } catch {
      // reported below
    }
    context.addIssue({ code: "custom", message });
    return z.NEVER;
  });
}

/** The networks' official stablecoin contracts (lowercase), used unless EVM_TOKENS names others. */
const OFFICIAL_TOKENS: Record<EvmNetwork, Partial<Record<EvmToken, string>>> = {
  arbitrum: {
    USDC: "0xaf88d065e77c8cc2239327c5edb3a432268e5831",
    USDT: "0xfd086bc7cd5c481dcc9c85ebe478a1c0b69fcbb9",
  },
  bnb: {
    USDC: "0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d",
    USDT: "0x55d398326f99059ff775485246999027b3197955",
  },
};
const url = z.string().url();

const DEFAULT_CONFIRMATIONS: Record<EvmNetwork, number> = { arbitrum: 1, bnb: 3 };
/**
 * Depths past which a reorg is not expected: BNB Smart Chain's validators
 * finalise in a couple of blocks (fast finality) and 15 blocks is the
 * classic bound for its Parlia consensus; Arbitrum One's sequencer orders
 * blocks and does not reorg them in normal operation, 20 blocks (~5 s)
 * covers a node that answered from a short-lived fork.
 */
const DEFAULT_FINALITY: Record<EvmNetwork, number> = { arbitrum: 20, bnb: 15 };

const EnvSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATABASE_URL: z.string().regex(
    /^(file:|libsql:|https?:|wss?:)/,
    "deve começar com file:, libsql:, http(s): ou ws(s):",
  )
    .default("file:./data/service.db"),
  DATABASE_AUTH_TOKEN: z.string().min(1).optional(),
  SERVICE_ENV: z.enum(["qa", "production"]).default("qa"),
  OPERATOR_TOKEN: z.string().min(32, "deve ter pelo menos 32 caracteres").optional(),
  MASTER_KEY: z.string().refine(isBase64Of32Bytes, "deve ser 32 bytes em base64").optional(),
  MASTER_KEYS_PREVIOUS: z.string()
    .refine(
      (list) => list.split(",").every((key) => isBase64Of32Bytes(key.trim())),
      "deve ser uma lista separada por vírgulas de chaves de 32 bytes em base64",
    )
    .optional(),
  VENUE_A_URL: url.optional(),
  VENUE_A_SPOT_URL: url.optional(),
  VENUE_B_URL: url.optional(),
  VENUE_A_STREAM_URL: url.optional(),
  VENUE_B_STREAM_URL: url.optional(),
  VENUE_B_NETWORK: z.enum(["mainnet", "testnet"]).optional(),
  VENUE_B_BUILDER_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "deve ser um endereço 0x de 40 hexadecimais")
    .optional(),
  EGRESS_ID: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, "deve ter de 1 a 64 letras, dígitos ou . _ : -")
    .default("default"),
  EGRESS_ADDRESSES: z.string().trim()
    .transform((list) => list.split(",").map((address) => address.trim()).filter(Boolean))
    .pipe(z.array(z.union([z.ipv4(), z.ipv6()], { error: "deve ser uma lista de endereços IP separados por vírgula" })))
    .optional(),
  VENUE_A_IP_WEIGHT_PER_MINUTE: z.coerce.number({ error: "deve ser um número" }).int().min(1).default(2400),
  VENUE_B_IP_WEIGHT_PER_MINUTE: z.coerce.number({ error: "deve ser um número" }).int().min(1).default(1200),
  EVM_RPC_BNB: url.optional(),
  EVM_RPC_ARBITRUM: url.optional(),
  EVM_TOKENS: jsonOf(
    z.partialRecord(
      z.enum(EVM_NETWORKS),
      z.partialRecord(z.enum(["USDT", "USDC"]), z.string().regex(/^0x[0-9a-fA-F]{40}$/)),
    ),
    'deve ser JSON como {"arbitrum":{"USDC":"0x…"}} com endereços 0x de 40 hexadecimais',
  ).optional(),
  EVM_CONFIRMATIONS: jsonOf(
    z.partialRecord(z.enum(EVM_NETWORKS), z.number().int().min(1).max(1000)),
    'deve ser JSON como {"arbitrum":1,"bnb":3}',
  ).optional(),
  EVM_FINALITY: jsonOf(
    z.partialRecord(z.enum(EVM_NETWORKS), z.number().int().min(1).max(10_000)),
    'deve ser JSON como {"arbitrum":20,"bnb":15}',
  ).optional(),
  EVM_LOG_RANGE: z.coerce.number({ error: "deve ser um número de blocos" }).int("deve ser um número inteiro de blocos")
    .min(1, "deve ser pelo menos 1").max(100_000, "deve ser no máximo 100000").default(2000),
  OUTBOUND_ALLOW_LOOPBACK: z.enum(["true", "false"], { error: "deve ser true ou false" }).default("false"),
  PUBLIC_BASE_URL: url.optional(),
  CONNECT_URL: url.optional(),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number({ error: "deve ser um número de segundos" })
    .int("deve ser um número inteiro de segundos")
    .min(1, "deve ser pelo menos 1")
    .max(600, "deve ser no máximo 600")
    .default(20),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  databaseAuthToken?: string;
  serviceEnv: "qa" | "production";
  /** Absent in QA until the data dir provides one (see main.ts). */
  operatorToken?: string;
  masterKey?: string;
  /**
   * Master keys being rotated out: ciphertexts sealed with them still open
   * until `rotate-master-key` re-seals them with `masterKey`.
   */
  previousMasterKeys: string[];
  venueAUrl?: string;
  /** VENUE_A's spot host (the key-permission check); required beside VENUE_A_URL. */
  venueASpotUrl?: string;
  venueBUrl?: string;
  /**
   * Where the venues push account updates (VENUE_A: its user-data-stream
   * host; VENUE_B: its WebSocket). Default: the venue's URL with a ws scheme
   * (VENUE_B: plus `/ws`), which is where the simulators serve them.
   */
  venueAStreamUrl?: string;
  venueBStreamUrl?: string;
  /**
   * The network every VENUE_B signature names (source "a"/"b",
   * hyperliquidChain): VENUE_B_NETWORK, else mainnet in production and testnet
   * in QA. The adapter and the QA simulator read this one value.
   */
  venueBMainnet: boolean;
  /**
   * The platform's single builder on VENUE_B: the beneficiary of builder fees
   * that clients approve. QA uses a fixed address the simulator funds.
   */
  venueBBuilderAddress: `0x${string}`;
  /**
   * The public IP this instance's venue requests leave from (instances
   * behind one NAT share it): request weight is budgeted per venue and egress.
   */
  egressId: string;
  /**
   * The public addresses the venue requests leave from (`EGRESS_ADDRESSES`),
   * shown to a client who restricts an exchange key to them; empty when not
   * configured. Every instance behind one egress sets the same list.
   */
  egressAddresses: string[];
  /** The venues' published request weight per minute and IP (lower it to keep a margin for other tools). */
  ipWeightPerMinute: { VENUE_A: number; VENUE_B: number };
  evmRpc: { bnb?: string; arbitrum?: string };
  /** Token contracts per network (lowercase addresses); a network without RPC is not enabled whatever it lists. */
  evmTokens: Record<EvmNetwork, Partial<Record<EvmToken, string>>>;
  /** Blocks on top of a transfer's before it credits. */
  evmConfirmations: Record<EvmNetwork, number>;
  /**
   * Blocks on top of a credited transfer's before it is final: until then
   * each payments run reads it again, and a reorg that took it away reopens
   * the obligation. Never below the network's confirmations.
   */
  evmFinality: Record<EvmNetwork, number>;
  /** Blocks per `eth_getLogs` call of the payments scan (nodes cap the range they answer). */
  evmLogRange: number;
  /**
   * QA and tests only: partner URLs (webhook endpoints) may point at this
   * machine's loopback, over http too, so a local receiver gets deliveries.
   * Every other private or reserved address stays refused.
   */
  allowLoopbackTargets: boolean;
  publicBaseUrl: string;
  connectUrl: string;
  logLevel: Env["LOG_LEVEL"];
  /** How long a shutdown waits for requests and job runs in flight before cutting them. */
  shutdownGraceSeconds: number;
}

export class ConfigError extends Error {}

/** The builder QA runs with (no key behind it is needed: it only receives fees). */
export const QA_BUILDER_ADDRESS = "0xb0b0000000000000000000000000000000000b0b";

/** Parse and validate; throws ConfigError with one line per bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = EnvSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== "")),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Configuração inválida: ${lines.join("; ")}`);
  }
  const e = parsed.data;
  if (e.SERVICE_ENV === "production") {
    const missing = ([
      "OPERATOR_TOKEN",
      "MASTER_KEY",
      "VENUE_A_URL",
      "VENUE_A_SPOT_URL",
      "VENUE_B_URL",
      "VENUE_A_STREAM_URL",
      "VENUE_B_BUILDER_ADDRESS",
    ] as const)
      .filter((name) => !e[name]);
    const problems = missing.map((name) => `${name}: obrigatória em production`);
    if (e.OUTBOUND_ALLOW_LOOPBACK === "true") problems.push("OUTBOUND_ALLOW_LOOPBACK: proibida em production");
    if (problems.length) throw new ConfigError(`Configuração inválida: ${problems.join("; ")}`);
  }
  const evmConfirmations = { ...DEFAULT_CONFIRMATIONS, ...e.EVM_CONFIRMATIONS };
  const shallow = EVM_NETWORKS.filter((network) => (e.EVM_FINALITY?.[network] ?? Infinity) < evmConfirmations[network]);
  if (shallow.length) {
    throw new ConfigError(
      `Configuração inválida: ${
        shallow.map((network) =>
          `EVM_FINALITY.${network}: deve ser pelo menos as confirmações da rede (${evmConfirmations[network]})`
        ).join("; ")
      }`,
    );
  }
  const base = e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseAuthToken: e.DATABASE_AUTH_TOKEN,
    serviceEnv: e.SERVICE_ENV,
    operatorToken: e.OPERATOR_TOKEN,
    masterKey: e.MASTER_KEY,
    previousMasterKeys: e.MASTER_KEYS_PREVIOUS?.split(",").map((key) => key.trim()) ?? [],
    venueAUrl: e.VENUE_A_URL,
    venueASpotUrl: e.VENUE_A_SPOT_URL,
    venueBUrl: e.VENUE_B_URL,
    venueAStreamUrl: e.VENUE_A_STREAM_URL,
    venueBStreamUrl: e.VENUE_B_STREAM_URL,
    venueBMainnet: (e.VENUE_B_NETWORK ?? (e.SERVICE_ENV === "production" ? "mainnet" : "testnet")) === "mainnet",
    venueBBuilderAddress: (e.VENUE_B_BUILDER_ADDRESS ?? QA_BUILDER_ADDRESS).toLowerCase() as `0x${string}`,
    egressId: e.EGRESS_ID,
    egressAddresses: e.EGRESS_ADDRESSES ?? [],
    ipWeightPerMinute: { VENUE_A: e.VENUE_A_IP_WEIGHT_PER_MINUTE, VENUE_B: e.VENUE_B_IP_WEIGHT_PER_MINUTE },
    evmRpc: { bnb: e.EVM_RPC_BNB, arbitrum: e.EVM_RPC_ARBITRUM },
    evmTokens: Object.fromEntries(EVM_NETWORKS.map((network) => [
      network,
      Object.fromEntries(
        Object.entries(e.EVM_TOKENS ? e.EVM_TOKENS[network] ?? {} : OFFICIAL_TOKENS[network])
          .map(([token, address]) => [token, address!.toLowerCase()]),
      ),
    ])) as Config["evmTokens"],
    evmConfirmations,
    // A default depth never sits below confirmations raised by EVM_CONFIRMATIONS.
    evmFinality: Object.fromEntries(EVM_NETWORKS.map((network) => [
      network,
      e.EVM_FINALITY?.[network] ?? Math.max(DEFAULT_FINALITY[network], evmConfirmations[network]),
    ])) as Config["evmFinality"],
    evmLogRange: e.EVM_LOG_RANGE,
    allowLoopbackTargets: e.OUTBOUND_ALLOW_LOOPBACK === "true",
    publicBaseUrl: base.replace(/\/$/, ""),
    connectUrl: (e.CONNECT_URL ?? base).replace(/\/$/, ""),
    logLevel: e.LOG_LEVEL,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
  };
}

function isBase64Of32Bytes(value: string): boolean {
  try {
    return atob(value).length === 32;
  } catch {
    return false;
  }
}

/**
 * QA convenience: OPERATOR_TOKEN and MASTER_KEY are generated on first start
 * and kept in the data dir (mode 600), so a newcomer needs no set-up. The
 * returned `created` names what was generated, for a one-time notice.
 */
export async function withQaSecrets(config: Config, dataDir: string): Promise<{ config: Config; created: string[] }> {
  if (config.serviceEnv !== "qa") return { config, created: [] };
  await Deno.mkdir(dataDir, { recursive: true });
  const created: string[] = [];
  const keep = async (file: string, make: () => string): Promise<string> => {
    const path = `${dataDir}/${file}`;
    try {
      return (await Deno.readTextFile(path)).trim();
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const value = make();
      await Deno.writeTextFile(path, value + "\n", { mode: 0o600 });
      created.push(path);
      return value;
    }
  };
  const random = (bytes: number) => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))));
  return {
    config: {
      ...config,
      operatorToken: config.operatorToken ??
        await keep("operator_token", () => `op_${random(32).replace(/[+/=]/g, "")}`),
      masterKey: config.masterKey ?? await keep("master_key", () => random(32)),
    },
    created,
  };
}

/** The data dir: beside the default database file, or ./data for remote databases. */
export function dataDirOf(config: Config): string {
  if (!config.databaseUrl.startsWith("file:")) return "./data";
  const path = config.databaseUrl.slice("file:".length);
  const slash = path.lastIndexOf("/");
  return slash > 0 ? path.slice(0, slash) : ".";
}
