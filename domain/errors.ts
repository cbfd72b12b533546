import { storageFailure } from "../db/connection.ts";

/**
 * Every error code the service answers with: its HTTP status and a Portuguese
 * message ready to show to a person. Domain code throws `ApiError(code)` and
 * knows nothing about HTTP; routes/middleware/errors.ts turns it into the
 * `{error:{code,message,requestId}}` envelope.
 */

interface CatalogEntry {
  status: number;
  message: string;
}

export const ERROR_CATALOG = {
  // Authentication and limits
  B2B_CREDENTIAL_INVALID: { status: 401, message: "Credencial ausente, inválida, revogada ou expirada." },
  PRINCIPAL_NOT_ACTIVE: { status: 403, message: "O parceiro está suspenso ou revogado." },
  RATE_LIMITED: { status: 429, message: "Limite de requisições por minuto atingido. Aguarde a próxima janela." },
  TOO_MANY_REQUESTS: {
    status: 429,
    message: "Muitas tentativas a partir deste endereço. Tente novamente em instantes.",
  },
  OPERATOR_UNAUTHORIZED: { status: 401, message: "Token de operador ausente ou inválido." },
  /** Operator API: the change conflicts with the current state (e.g. removing a strategy in use). */
  STATE_CONFLICT: { status: 409, message: "A alteração conflita com o estado atual." },

  // Scope, identity, tenant
  NOT_FOUND: { status: 404, message: "Recurso não encontrado." },
  OWNER_NOT_ALLOWED: { status: 403, message: "O cliente não pertence a este parceiro ou está suspenso." },
  SCOPE_FIELD_REJECTED: { status: 403, message: "O corpo contém um campo controlado pela plataforma." },
  TENANT_REQUIRED: { status: 400, message: "Informe o tenantId: este parceiro possui mais de um contrato." },
  TENANT_MISMATCH: { status: 409, message: "Este externalUserId já existe em outro tenant." },
  TENANT_NOT_ACTIVE: { status: 403, message: "O tenant está suspenso." },
  CLIENT_SUSPENDED: { status: 403, message: "A ação exige um cliente ativo." },
  B2B_ACCESS_SUSPENDED: { status: 403, message: "Acesso suspenso: cliente, tenant ou parceiro suspenso." },

  // Grants and risk
  GRANT_ESCALATION: { status: 403, message: "A solicitação excede a concessão recebida." },
  PROVIDER_NOT_ALLOWED: { status: 403, message: "Provedor fora do contrato do parceiro." },
  PROVIDER_NOT_GRANTED: { status: 403, message: "Provedor fora da concessão efetiva." },
  STRATEGY_NOT_AVAILABLE: { status: 403, message: "Estratégia não publicada." },
  STRATEGY_NOT_GRANTED: { status: 403, message: "Estratégia fora da concessão efetiva do cliente." },
  RISK_ENVELOPE_EXCEEDED: { status: 403, message: "Valor acima do envelope de risco efetivo." },
  PAPER_NOT_GRANTED: { status: 403, message: "O modo de demonstração não é oferecido; use mode REAL." },
  SETUP_INCOMPLETE: { status: 400, message: "Faltam campos obrigatórios para ativar a configuração." },
  RISK_ACK_REQUIRED: { status: 422, message: "Os alertas desta combinação precisam ser reconhecidos." },
  DAILY_LOSS_HALT: { status: 422, message: "Limite de perda diária atingido; novas entradas só no próximo dia UTC." },
  VALIDATION_ERROR: { status: 400, message: "Corpo ou parâmetros inválidos." },

  // Providers and connection
  HOSTED_CONNECT_REQUIRED: { status: 403, message: "Segredos não são aceitos pela API; use a página de conexão." },
  RETURN_URL_NOT_ALLOWED: { status: 403, message: "A returnUrl não pertence a uma origem https registrada." },
  CONNECT_INVALID: { status: 404, message: "Link de conexão inválido." },
  CONNECT_EXPIRED: { status: 409, message: "A sessão de conexão expirou (15 minutos). Solicite um novo link." },
  CONNECT_ALREADY_USED: { status: 409, message: "Este link de conexão já foi utilizado." },
  CONNECT_NOT_ACTIVE: { status: 409, message: "Esta sessão de conexão não está mais ativa." },
  CONNECT_ATTEMPTS_EXHAUSTED: { status: 409, message: "Tentativas esgotadas para este link. Solicite um novo." },
  /** The connect page's own (not in the spec's table): a later exchange of the link, in another tab or device, replaced this tab's ticket. */
  CONNECT_OPENED_ELSEWHERE: {
    status: 409,
    message: "Este link foi aberto em outra aba ou aparelho. Continue por lá.",
  },
  /** The connect page's own (not in the spec's table): the wallet has never deposited at the venue, which knows no account for it. */
  WALLET_NOT_ON_VENUE: {
    status: 422,
    message: "Esta carteira ainda não tem conta no provedor. Deposite primeiro e tente de novo.",
  },
  WRONG_SCHEME: { status: 400, message: "Este link pertence ao fluxo de outro provedor." },
  PROVIDER_CREDENTIAL_REJECTED: { status: 400, message: "O provedor recusou a credencial." },
  AGENT_APPROVAL_REJECTED: { status: 400, message: "A aprovação do agente foi recusada." },
  BUILDER_APPROVAL_REJECTED: { status: 400, message: "A aprovação da taxa de builder foi recusada." },
  WALLET_MISMATCH: { status: 403, message: "Assinado por uma carteira diferente da carteira principal conectada." },
  API_NOT_CONFIGURED: { status: 422, message: "Conta do provedor não conectada." },
  CREDENTIALS_MISSING: { status: 422, message: "Não há conexão com o provedor para esta leitura." },
  PROVIDER_DOWN: { status: 503, message: "Provedor indisponível ou resultado incerto. Consulte antes de repetir." },
  ACCOUNT_BUSY: { status: 409, message: "Outra entrada desta conta está em andamento." },

  // Monetization on opening
  BUILDER_CONFIG_REQUIRED: { status: 403, message: "Abertura sem configuração de builder efetiva." },
  BUILDER_CONFIG_INVALID: { status: 403, message: "Beneficiário de builder inválido." },
  BUILDER_FEE_INVALID: { status: 403, message: "Taxa de builder inválida ou acima do teto." },
  BUILDER_APPROVAL_REQUIRED: {
    status: 403,
    message: "A aprovação da carteira não cobre a taxa de builder; abra uma sessão BUILDER_APPROVAL.",
  },

  // Billing and payment
  RECIPIENT_NOT_CONFIGURED: { status: 400, message: "Recebedor da plataforma não configurado." },
  NETWORK_NOT_ENABLED: { status: 400, message: "Rede não habilitada para esta cobrança." },
  TOKEN_NOT_SUPPORTED: { status: 400, message: "Token não aceito para esta cobrança." },
  CURRENCY_MISMATCH: { status: 400, message: "Moeda incompatível com esta cobrança." },
  INVALID_PAYER: { status: 400, message: "Endereço pagador inválido." },
  /** Said for the obligation's status where it is known (superseded_instructions.ts, obligationNotOpen). */
  OBLIGATION_NOT_OPEN: { status: 409, message: "Esta cobrança não está mais em aberto; não há nada a pagar por ela." },
  PAYMENT_EXPIRED: { status: 409, message: "A instrução de pagamento expirou; emita uma nova." },
  /** Not in the spec's table (see docs/api-notes.md): the obligation was reduced after the instruction. */
  PAYMENT_SUPERSEDED: {
    status: 409,
    message: "O valor da cobrança mudou depois desta instrução; peça uma nova instrução de pagamento.",
  },
  /** The payment page's own (not in the spec's table): another link of the obligation relayed its send just now. */
  PAYMENT_IN_PROGRESS: {
    status: 409,
    message: "Outro pagamento desta cobrança acabou de ser enviado; aguarde um instante e abra o link de novo.",
  },
  TX_ALREADY_USED: { status: 409, message: "Esta transação já quitou outra obrigação." },
  TX_MISMATCH: { status: 409, message: "A instrução já foi confirmada com outra transação." },
  INVALID_TX_HASH: { status: 400, message: "Hash de transação malformado." },
  PAYMENT_METHOD_MISMATCH: { status: 400, message: "Este método de pagamento não aceita txHash." },
  PAYMENT_TICKET_INVALID: { status: 400, message: "A assinatura da página de pagamento expirou ou já foi usada." },
  PAYMENT_REJECTED: { status: 400, message: "O provedor recusou o envio assinado." },

  // Idempotency
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, message: "Informe o cabeçalho Idempotency-Key." },
  IDEMPOTENCY_CONFLICT: {
    status: 409,
    message: "Esta Idempotency-Key já foi usada com outro corpo. Use uma nova chave.",
  },
  IDEMPOTENCY_IN_PROGRESS: { status: 409, message: "Uma requisição com esta Idempotency-Key ainda está em andamento." },

  // Admission refusals for new real entries
  ASSET_POLICY_REQUIRED: { status: 422, message: "O ativo não possui política de entrada configurada." },
  ASSET_NOTIONAL_LIMIT: { status: 422, message: "Notional da entrada fora do mínimo ou máximo do ativo." },
  BOOK_UNVERIFIED: { status: 422, message: "Livro de ofertas indisponível ou inconsistente; nenhuma ordem enviada." },
  SPREAD_LIMIT: { status: 422, message: "Spread acima do limite do ativo." },
  LIQUIDITY_LIMIT: { status: 422, message: "A entrada excede a fração permitida da liquidez visível." },
  SLIPPAGE_LIMIT: { status: 422, message: "Slippage estimado acima do limite do ativo." },
  AGGREGATE_EXPOSURE_LIMIT: { status: 422, message: "Limite agregado de exposição da plataforma atingido." },
  EXPOSURE_UNVERIFIED: { status: 422, message: "Não foi possível verificar a exposição agregada." },
  ENTRY_CIRCUIT_OPEN: { status: 422, message: "Entradas pausadas temporariamente." },
  POSITION_COUNT_CAP: { status: 422, message: "Já existe uma posição real aberta nesta conta." },
  SIGNAL_DISTRIBUTION_LIMIT: { status: 422, message: "Conta fora da coorte deste sinal." },
  // Entry-gate refusals of a manual opening that the spec's tables do not name (see docs/api-notes.md)
  SETUP_DISABLED: { status: 422, message: "A configuração (setup) deste provedor está desativada." },
  ASSET_NOT_ALLOWED: { status: 422, message: "O ativo está fora dos ativos permitidos pelo setup." },
  ACCOUNT_SETTINGS_INVALID: { status: 422, message: "A conta no provedor tem configurações incompatíveis." },
  REAL_EXECUTION_NOT_VALIDATED: { status: 403, message: "A execução real ainda não foi validada neste provedor." },

  // Infrastructure (not in the spec's tables; see docs/api-notes.md)
  INTERNAL_ERROR: { status: 500, message: "Erro interno. Informe o requestId ao suporte." },
  /** The database refused the work for a while (locked by another process, disk full, I/O): the change was not recorded. */
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: "Serviço temporariamente indisponível; a operação não foi concluída. Tente novamente em instantes.",
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    options: {
      /** Portuguese message replacing the catalog's, e.g. one that names the exceeded limit. */
      message?: string;
      /** For codes the spec gives two statuses (403 or 422, 400 or 422). */
      status?: number;
      /** Extra body fields some routes add beside `error` (e.g. setupStatus). */
      extra?: Record<string, unknown>;
      /** When the caller may try again (rate limits): becomes `Retry-After`. */
      retryAfterSeconds?: number;
      /**
       * The action may have taken effect (a venue call whose answer was lost):
       * the answer is final for the request's Idempotency-Key, so a retry
       * replays it instead of acting twice.
       */
      uncertain?: boolean;
    } = {},
  ) {
    super(options.message ?? ERROR_CATALOG[code].message);
    this.name = "ApiError";
    this.status = options.status ?? ERROR_CATALOG[code].status;
    this.extra = options.extra;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.uncertain = options.uncertain ?? false;
  }
  readonly extra?: Record<string, unknown>;
  readonly retryAfterSeconds?: number;
  readonly uncertain: boolean;
}

/** Seconds a caller waits before trying again: a lock passes in seconds, a full or failing disk needs an operator. */
const STORAGE_RETRY_AFTER_SECONDS = { BUSY: 2, FULL: 30, IO: 30 } as const;

/**
 * A failure of the storage rather than of the request (see db/connection.ts
 * `storageFailure`) as the error a caller can act on: `SERVICE_UNAVAILABLE`
 * with when to try again. Null for anything else.
 */
export function storageUnavailable(error: unknown): { error: ApiError; cause: "BUSY" | "FULL" | "IO" } | null {
  const cause = storageFailure(error);
  if (!cause) return null;
  return {
    error: new ApiError("SERVICE_UNAVAILABLE", { retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS[cause] }),
    cause,
  };
}
