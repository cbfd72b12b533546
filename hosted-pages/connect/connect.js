// The connect page's script. It reads the one-time token from the URL
// fragment, removes it from the address bar at once, exchanges it for a page
// ticket (kept in this tab's sessionStorage so a reload, or Back after the
// end, shows where the client is; the token itself is never stored) and then
// walks the client through the flow of the session's provider. Neither token
// nor ticket ever goes into a URL or the console: the token travels only in
// the exchange's body, the ticket only in an Authorization header. The one
// exception is the handoff link a phone without a wallet carries into a
// wallet's browser: a single-use token of its own, in the fragment.
"use strict";

(() => {
  const app = document.getElementById("app");
  const TICKET_KEY = "connect-ticket";
  const state = { ticket: null, session: null };

  const kit = globalThis.pageKit(app);
  const { el, show, feedbackArea, message, say, busy, shortAddress, hint, tap, Tap } = kit;
  const api = pageApi("/connect", () => state.ticket);
  const TOKEN = /^[A-Za-z0-9_-]{43}$/;
  /** Narrow screens get long explanations folded (<details>), so the form and its action stay in sight. */
  const narrow = () => globalThis.matchMedia?.("(max-width: 39.99rem)").matches ?? false;

  /**
   * A day and time in Brasília, said so ("24 de maio de 2027, 19:45 (horário de Brasília)"): an agent's end is
   * months away, and the client may read it from anywhere.
   */
  function brasiliaDate(epochMs) {
    const when = new Date(epochMs).toLocaleString("pt-BR", {
      timeZone: "America/Sao_Paulo",
      dateStyle: "long",
      timeStyle: "short",
    });
    return `${when} (horário de Brasília)`;
  }

  /** Tenths of a basis point as a percentage: 25 -> "0,025%". */
  function feePercent(tenthsBps) {
    return `${(tenthsBps / 1000).toLocaleString("pt-BR", { maximumFractionDigits: 3 })}%`;
  }

  // ------------------------------------------------------------------ frame: who asks, how long, the way back

  /** The tab's title names the step and who asked ("Conectar conta Venue A — Corretora Exemplo"). */
  function title(text) {
    const who = state.session?.partnerName;
    document.title = who ? `${text} — ${who}` : text;
  }

  function header() {
    const session = state.session;
    return kit.header(session?.partnerName, session?.providerName, "Conexão segura");
  }

  /** The session's end, counted from when the page read it (a phone's clock may be off). */
  let endsAt = null;
  const validity = () => kit.validFor(endsAt, { onExpire: showExpired });

  const backButton = () => kit.backButton(state.session);

  function forget() {
    sessionStorage.removeItem(TICKET_KEY);
    state.ticket = null;
  }

  function again() {
    const who = state.session?.partnerName;
    return who
      ? `Para tentar de novo, volte para ${who} e peça um novo link de conexão.`
      : "Para tentar de novo, peça um novo link de conexão a quem enviou este.";
  }

  /** A screen after which this link can do nothing more; the ticket stays, so a reload shows it again. */
  function showFinal(heading, text, advice = again()) {
    title(heading);
    kit.finalScreen(header(), heading, text, advice, backButton());
  }

  function showExpired() {
    showFinal("Link expirado", "Este link passou dos 15 minutos em que vale e não pode mais ser usado.");
  }

  /** Another tab or device exchanged the link after this one: only the latest opening works. */
  function showOpenedElsewhere() {
    forget();
    title("Link aberto em outra aba");
    show(
      header(),
      el("h1", {}, "Link aberto em outra aba"),
      message("warning", "Este link foi aberto em outra aba ou aparelho, e só a última abertura continua valendo."),
      el(
        "p",
        {},
        "Continue por lá. Para continuar aqui, abra de novo o link que você recebeu: a outra aba deixa de funcionar.",
      ),
      backButton(),
    );
  }

  /** A link already used to connect: the account is connected, which is good news, not an error. */
  function showAlreadyConnected(error) {
    forget();
    state.session = state.session ?? error.session ?? null;
    const session = state.session;
    const heading = session?.purpose === "BUILDER_APPROVAL" ? "Taxa já aprovada" : "Conta já conectada";
    title(heading);
    show(
      header(),
      el("h1", {}, heading),
      message("success", error.message),
      el("p", { class: "muted" }, "Não há mais nada a fazer com este link."),
      backButton() ?? el("p", { class: "muted" }, "Você já pode fechar esta página."),
    );
  }

  /** Refusals after which this link can do nothing more. */
  const FINAL = {
    CONNECT_INVALID: "Link inválido",
    CONNECT_EXPIRED: "Link expirado",
    CONNECT_NOT_ACTIVE: "Link substituído ou encerrado",
    CONNECT_ATTEMPTS_EXHAUSTED: "Tentativas esgotadas",
    WRONG_SCHEME: "Link de outra corretora",
  };
  const ENDS_LINK = new Set([...Object.keys(FINAL), "CONNECT_ALREADY_USED", "CONNECT_OPENED_ELSEWHERE"]);
  const isFinal = (error) => error instanceof ApiFailure && (ENDS_LINK.has(error.code) || error.attemptsLeft === 0);

  function showError(error) {
    if (error.code === "CONNECT_OPENED_ELSEWHERE") return showOpenedElsewhere();
    if (error.code === "CONNECT_ALREADY_USED") return showAlreadyConnected(error);
    if (error.code === "CONNECT_INVALID") {
      forget();
      return showFinal(
        "Link inválido",
        "Este link de conexão não é válido. Confira se abriu o link completo; um link levado para a carteira vale uma vez só.",
      );
    }
    if (error.attemptsLeft === 0) {
      return showFinal("Tentativas esgotadas", `${error.message} As tentativas deste link acabaram.`);
    }
    showFinal(FINAL[error.code] ?? "Não foi possível continuar", error.message);
  }

  /** A refusal's message, with the attempts it left when it counted as one. */
  function refusalText(error) {
    if (typeof error.attemptsLeft !== "number") return error.message;
    const left = error.attemptsLeft === 1 ? "Resta 1 tentativa." : `Restam ${error.attemptsLeft} tentativas.`;
    return `${error.message} ${left}`;
  }

  /** What a refusal means for the screen: the end of the link, or a message and another try. */
  function handleRefusal(error, area) {
    if (isFinal(error)) return showError(error);
    if (error.code === "PROVIDER_DOWN") {
      // The API's message is the partner's ("Provedor indisponível…"); a retry here never acts twice.
      return say(
        area,
        "error",
        `A ${state.session.providerName} não respondeu agora. Tente de novo em instantes: nada será feito em dobro.`,
      );
    }
    say(area, "error", refusalText(error));
  }

  /** Long text: folded on a phone (the action must stay in sight), open on a desktop. */
  function foldable(summary, ...content) {
    return el(
      "details",
      { class: "card", open: !narrow() },
      el("summary", {}, el("h2", {}, summary)),
      ...content,
    );
  }

  function testBox(label, text, action) {
    const button = el("button", { type: "button", class: "button secondary", onClick: () => action(button) }, label);
    return el(
      "aside",
      { class: "sandbox", "aria-label": "Ambiente de testes" },
      el("p", { class: "sandbox-title" }, "Ambiente de testes"),
      el("p", {}, text),
      button,
    );
  }

  // ------------------------------------------------------------------ API key flow (VENUE_A)

  /** After the connection: worth the client's attention, with the one thing to do. */
  function warningOf(code, session) {
    if (code === "WITHDRAWALS_ENABLED") {
      return [
        "Esta chave permite saques.",
        " Conectamos a conta, mas recomendamos criar uma nova chave sem a permissão de saque e conectar de novo: assim ninguém consegue sacar com ela, nem se ela vazar.",
      ];
    }
    if (code !== "IP_UNRESTRICTED") return null;
    return session.egressAddresses.length
      ? [
        "Esta chave não está restrita a um IP.",
        " Recomendamos restringi-la aos IPs do serviço abaixo, nas configurações da chave na corretora:",
        ipList(session),
      ]
      : [
        "Esta chave não está restrita a um IP.",
        " Quem tiver a chave e o segredo pode usá-la de qualquer lugar; guarde-os bem ou crie uma chave nova.",
      ];
  }

  function ipList(session) {
    return el(
      "div",
      { class: "ip-list" },
      session.egressAddresses.map((address) => kit.copyable("IP do serviço", address)),
    );
  }

  /** Each setting the connection check refuses, what it means and exactly where to change it at the exchange. */
  const SETTINGS_FIXES = {
    FUTURES_DISABLED: {
      what: "A chave não tem a permissão de Futuros.",
      fix: "Em Gerenciamento de API, edite esta chave, marque “Ativar Futuros” e salve.",
    },
    HEDGE_MODE_ENABLED: {
      what: "A conta de Futuros está no modo de posição dupla (Hedge).",
      fix:
        "Em Futuros, abra Preferências › Modo de posição e escolha “Modo unidirecional (One-way)”. Se houver posições ou ordens abertas, feche-as antes.",
    },
    MULTI_ASSETS_MARGIN_ENABLED: {
      what: "A conta de Futuros usa margem Multi-Assets.",
      fix: "Em Futuros, abra Preferências › Modo de ativos e escolha “Modo de ativo único” (Single-Asset).",
    },
  };

  function settingsRefusal(error, session) {
    const fixes = (error.problems ?? []).filter((code) => SETTINGS_FIXES[code]);
    return message(
      "warning",
      el("strong", {}, "A chave está certa, mas a conta ainda não pode operar."),
      el(
        "ol",
        { class: "steps fixes" },
        fixes.map((code) =>
          el(
            "li",
            {},
            SETTINGS_FIXES[code].what,
            " ",
            el("strong", {}, `Na ${session.providerName}: `),
            SETTINGS_FIXES[code].fix,
          )
        ),
      ),
      el(
        "p",
        {},
        `Depois de mudar, ${tap} em “Testar de novo”. A chave continua preenchida e isso não gasta tentativa.`,
      ),
    );
  }

  function keyInput(id, name, type) {
    return el("input", {
      id,
      name,
      type,
      autocomplete: "off",
      autocapitalize: "off",
      autocorrect: "off",
      spellcheck: "false",
      required: true,
    });
  }

  function showApiKeyForm() {
    const session = state.session;
    title(`Conectar conta ${session.providerName}`);
    const key = keyInput("api-key", "apiKey", "text");
    const secret = keyInput("api-secret", "apiSecret", "password");
    const fields = { apiKey: key, apiSecret: secret };
    const toggle = el("button", {
      type: "button",
      class: "link",
      "aria-controls": "api-secret",
      "aria-pressed": "false",
      "aria-label": "Mostrar a chave secreta",
      onClick: () => {
        const hidden = secret.type === "password";
        secret.type = hidden ? "text" : "password";
        toggle.textContent = hidden ? "Ocultar" : "Mostrar";
        toggle.setAttribute("aria-pressed", String(hidden));
        toggle.setAttribute("aria-label", hidden ? "Ocultar a chave secreta" : "Mostrar a chave secreta");
      },
    }, "Mostrar");
    // The button sits in the action bar outside the form (`form` names it): a sticky bar cannot leave its
    // parent, and on a phone the form starts below the fold.
    const submit = el("button", { type: "submit", form: "api-key-form", class: "button primary" }, "Conectar conta");
    const feedback = feedbackArea();
    for (const input of [key, secret]) input.addEventListener("input", () => kit.clearFieldError(input));

    async function connect(event) {
      event.preventDefault();
      const apiKey = key.value.trim();
      const apiSecret = secret.value.trim();
      feedback.replaceChildren();
      if (!apiSecret) kit.fieldError(secret, "Cole a Secret Key.");
      if (!apiKey) kit.fieldError(key, "Cole a API Key.");
      if (!apiKey || !apiSecret) return;
      const done = busy(submit, "Testando a chave…");
      say(feedback, "info", `Testando a chave na ${session.providerName}, só com leitura. Isso leva alguns segundos.`);
      try {
        const result = await api("/api-key", { body: { apiKey, apiSecret } });
        showConnected(result.warnings ?? []);
      } catch (error) {
        done();
        if (error.code === "VALIDATION_ERROR" && fields[error.field]) {
          feedback.replaceChildren();
          return kit.fieldError(fields[error.field], error.message);
        }
        if (error.code === "ACCOUNT_SETTINGS_INVALID") {
          submit.textContent = "Testar de novo";
          feedback.replaceChildren(settingsRefusal(error, session));
          return feedback.scrollIntoView({ block: "nearest" });
        }
        handleRefusal(error, feedback);
        if (!isFinal(error) && typeof error.attemptsLeft === "number") {
          secret.value = "";
          secret.focus();
        }
      }
    }

    const ipStep = session.egressAddresses.length
      ? el(
        "li",
        {},
        "Restrinja o acesso da chave aos ",
        el("strong", {}, "IPs do serviço"),
        " (opção “Restringir acesso a IPs confiáveis”):",
        ipList(session),
      )
      : null;

    show(
      header(),
      el("h1", {}, `Conecte sua conta ${session.providerName}`),
      validity(),
      el(
        "p",
        {},
        `Para ${session.partnerName} operar por você, crie na ${session.providerName} uma chave de API só para este serviço e cole-a aqui.`,
      ),
      foldable(
        "Como criar a chave",
        el(
          "ol",
          { class: "steps" },
          el(
            "li",
            {},
            "Em Gerenciamento de API, crie uma chave nova do tipo ",
            el("strong", {}, "HMAC"),
            hint("o tipo comum, que assina cada pedido com a Secret Key"),
            ", exclusiva para este serviço.",
          ),
          el(
            "li",
            {},
            "Nas permissões, ative ",
            el("strong", {}, "Futuros"),
            " e deixe ",
            el("strong", {}, "saques desativados"),
            ".",
          ),
          ipStep,
          el(
            "li",
            {},
            "Na conta de Futuros, use o modo de posição ",
            el("strong", {}, "única (One-way)"),
            hint("uma só posição por moeda, comprada ou vendida"),
            ", margem de ",
            el("strong", {}, "ativo único"),
            " (",
            el("strong", {}, "Multi-Assets"),
            hint("margem compartilhada entre moedas"),
            " desligado) e ",
            el("strong", {}, "margem isolada"),
            ".",
          ),
          el("li", {}, "Copie a API Key e a Secret Key. A Secret Key só aparece uma vez na corretora."),
        ),
      ),
      el(
        "form",
        { id: "api-key-form", novalidate: true, onSubmit: connect },
        el("label", { for: "api-key" }, "Chave de API (API Key)"),
        key,
        el("div", { class: "label-row" }, el("label", { for: "api-secret" }, "Chave secreta (Secret Key)"), toggle),
        secret,
        feedback,
      ),
      kit.actionBar(submit),
      el(
        "p",
        { class: "muted" },
        "Testamos a chave só com leitura e a guardamos criptografada. Ela nunca é mostrada de novo, nem para ",
        session.partnerName,
        ".",
      ),
      session.qa
        ? testBox(
          "Usar conta de teste",
          `Nada aqui usa dinheiro real: o botão cria uma conta de teste com saldo no simulador e preenche o formulário.`,
          async (button) => {
            const done = busy(button, "Criando conta de teste…");
            try {
              const keys = await api("/qa/test-credentials", { body: {} });
              key.value = keys.apiKey;
              secret.value = keys.apiSecret;
              say(feedback, "info", `Conta de teste criada e formulário preenchido. ${Tap} em Conectar conta.`);
              submit.focus();
            } catch (error) {
              handleRefusal(error, feedback);
            } finally {
              done();
            }
          },
        )
        : null,
      backButton(),
    );
  }

  // ------------------------------------------------------------------ wallet flow (VENUE_B)

  /** The wallet's own errors (EIP-1193 numeric codes), in words for the client. */
  function walletErrorText(error, phase) {
    if (error?.code === 4001) {
      return phase === "connect"
        ? "Conexão cancelada na carteira. Nada foi alterado. Você pode tentar de novo."
        : "Assinatura cancelada na carteira. Nada foi alterado e isso não conta como tentativa. Você pode tentar de novo.";
    }
    if (error?.code === -32002) return "Já existe um pedido aberto na sua carteira. Abra a carteira para continuar.";
    if (error?.code === 4100) return "A carteira não autorizou esta página. Desbloqueie a carteira e tente de novo.";
    return "A carteira não concluiu o pedido. Abra a carteira e tente de novo.";
  }

  function stepTitle(next) {
    return next.step === "AGENT"
      ? "Autorize o agente de negociação"
      : `Aprove a taxa da plataforma de até ${feePercent(next.builderFeeTenthsBps)} por operação`;
  }

  function stepText(next, total) {
    const counter = total > 1 ? `Assinatura ${next.step === "AGENT" ? 1 : total} de ${total}: ` : "";
    return `${counter}${stepTitle(next)}. Confira e assine na sua carteira.`;
  }

  /** The builder fee in words: what it is, how much, on what. */
  function feeLine(feeTenthsBps, renewal) {
    return el(
      "li",
      {},
      el("strong", {}, "A taxa da plataforma"),
      hint("builder: quem envia suas ordens à corretora e recebe esta taxa"),
      feeTenthsBps > 0
        ? `: até ${
          feePercent(feeTenthsBps)
        } do valor de cada operação (o notional: tamanho × preço), cobrada pela ${state.session.providerName} a cada negociação.`
        : ": nenhuma para este parceiro, nada a aprovar.",
      renewal && feeTenthsBps > 0 ? " Se já estiver aprovada, não é pedida de novo." : null,
    );
  }

  const revokeLine = (agentName) =>
    el(
      "li",
      {},
      "Para revogar depois: na ",
      state.session.providerName,
      ", abra a página API (agentes) e remova o agente",
      agentName ? ` “${agentName}”` : " desta plataforma",
      ". As operações por este serviço param na hora.",
    );

  /**
   * The agent's end, and how the wallet shows it: the venue reads it from the
   * name the wallet signs ("automation valid_until 1795…", in milliseconds).
   */
  function agentValidity(agent) {
    return [
      el("p", { class: "agent-validity" }, el("strong", {}, "Vale até "), brasiliaDate(agent.validUntil), "."),
      el(
        "p",
        { class: "muted" },
        "Na carteira, o nome aparece como ",
        el("code", { class: "agent-name" }, `${agent.name} valid_until ${agent.validUntil}`),
        `: esse número é o fim da autorização. Depois dele, a ${state.session.providerName} remove o agente e ${state.session.partnerName} envia um novo link para renovar.`,
      ),
    ];
  }

  /** What the wallet will show, before it opens: the agent, the builder, the fee and how to undo it. */
  function reviewCard(next) {
    const session = state.session;
    return el(
      "section",
      { class: "card review", "aria-labelledby": "review-title" },
      el("h2", { id: "review-title" }, "Confira antes de assinar"),
      kit.copyable("Sua carteira", next.walletAddress),
      next.agent
        ? [
          kit.copyable(`Agente “${next.agent.name}” (endereço que a carteira vai mostrar)`, next.agent.address),
          el("p", { class: "muted" }, "Ele pode abrir e fechar posições por você; não pode sacar nem transferir."),
          ...agentValidity(next.agent),
        ]
        : null,
      session.builder.feeTenthsBps > 0
        ? [
          kit.copyable("Builder (endereço que a carteira vai mostrar)", next.builderAddress),
          el(
            "p",
            { class: "muted" },
            `Taxa máxima: ${feePercent(next.builderFeeTenthsBps)} do valor (notional) de cada operação.`,
          ),
        ]
        : null,
      next.agent ? el("ul", { class: "steps" }, revokeLine(next.agent.name)) : null,
    );
  }

  /**
   * A connection that already has an agent: this link approves a new one in
   * its place (same name, so the venue replaces it). The builder step is asked
   * only if the fee is not approved, which the page learns only at the start.
   */
  function renewalIntro(renewal) {
    const session = state.session;
    return [
      renewal.lapsed
        ? message("warning", "A autorização anterior expirou: o agente não opera mais por você.")
        : renewal.accessExpiresAt
        ? el("p", {}, el("strong", {}, "A autorização atual vale até "), brasiliaDate(renewal.accessExpiresAt), ".")
        : null,
      el(
        "p",
        {},
        `Para ${session.partnerName} continuar operando por você, sua carteira autoriza um novo agente, que substitui o atual. Se a taxa da plataforma já estiver aprovada, é só uma assinatura.`,
      ),
    ];
  }

  function showWallet() {
    const session = state.session;
    const builderOnly = session.purpose === "BUILDER_APPROVAL";
    const renewal = builderOnly ? null : session.renewal;
    title(
      builderOnly
        ? "Aprovar taxa da plataforma"
        : renewal
        ? "Renovar autorização do agente"
        : `Conectar carteira ${session.providerName}`,
    );
    if (!globalThis.ethereum?.request) return showNoWallet();
    const feedback = feedbackArea();
    const review = el("div", {});
    // The step the wallet was last asked to sign: after a cancel, "try again" resumes it.
    const flow = { walletAddress: null, next: null, total: 1, agentValidUntil: null };
    const startLabel = builderOnly ? "Conectar carteira e aprovar" : "Conectar carteira";
    const start = el("button", { type: "button", class: "button primary" }, startLabel);
    const ui = { button: start, feedback, review, startLabel, firstLabel: startLabel };
    start.addEventListener("click", () => runWallet(ui, flow, globalThis.ethereum));

    show(
      header(),
      el(
        "h1",
        {},
        builderOnly
          ? "Aprove a taxa da plataforma"
          : renewal
          ? "Renove a autorização do agente"
          : `Conecte sua carteira à conta ${session.providerName}`,
      ),
      validity(),
      renewal ? renewalIntro(renewal) : builderOnly
        ? el(
          "p",
          {},
          `Conecte a mesma carteira que você já vinculou e aprove, nela, a taxa da plataforma que ${session.partnerName} cobra por operação.`,
        )
        : el(
          "p",
          {},
          `Para ${session.partnerName} operar por você, sua carteira autoriza um agente de negociação. Você assina na própria carteira; nenhuma chave sua sai dela.`,
        ),
      foldable(
        "O que você vai assinar",
        el(
          "ul",
          { class: "steps" },
          builderOnly ? null : el(
            "li",
            {},
            el("strong", {}, "Um agente de negociação"),
            hint("uma chave que este serviço guarda e usa só para negociar"),
            ": ele pode abrir e fechar posições por você, mas ",
            el("strong", {}, "não pode sacar nem transferir"),
            " seus fundos.",
          ),
          feeLine(session.builder.feeTenthsBps, renewal),
          el("li", {}, "Assinar não movimenta fundos nem custa taxa de rede."),
          revokeLine(null),
        ),
        session.builder.feeTenthsBps > 0
          ? kit.copyable("Builder (endereço que a carteira vai mostrar)", session.builder.address)
          : null,
      ),
      review,
      feedback,
      kit.actionBar(start),
      testWalletBox(ui, flow),
      backButton(),
    );
  }

  /** QA, for a first connection (a fresh test wallet cannot approve or renew for the wallet already connected). */
  function testWalletBox(ui, flow) {
    const session = state.session;
    if (!session.qa || session.purpose !== "CONNECT" || session.renewal || !globalThis.createTestWallet) return null;
    return testBox(
      "Usar carteira de teste",
      "Nada aqui usa dinheiro real: o botão cria, nesta página, uma carteira de teste com saldo no simulador, que assina sozinha.",
      (button) => useTestWallet(button, ui, flow),
    );
  }

  /** QA: a wallet made in this page (its key lives only in this page's memory), funded on the simulator. */
  async function useTestWallet(button, ui, flow) {
    const done = busy(button, "Criando carteira de teste…");
    let wallet;
    try {
      wallet = globalThis.createTestWallet();
      await api("/qa/test-credentials", { body: { walletAddress: wallet.address } });
    } catch (error) {
      done();
      return handleRefusal(error, ui.feedback);
    }
    say(ui.feedback, "info", `Carteira de teste ${shortAddress(wallet.address)} criada com saldo de teste.`);
    done();
    flow.next = null;
    // The test wallet signs by itself: no review stop.
    const label = button.textContent;
    await runWallet({ ...ui, button, review: el("div", {}), startLabel: label, firstLabel: label }, flow, wallet, {
      review: false,
    });
  }

  /** The wallet refusals that name what to do before anything is signed again. */
  function walletRefusal(error, ui) {
    if (error.code === "WALLET_NOT_ON_VENUE") {
      return say(ui.feedback, "error", el("strong", {}, "Carteira sem conta na corretora. "), error.message);
    }
    handleRefusal(error, ui.feedback);
  }

  /**
   * Connect the wallet, ask the service what to sign, show it, then have the
   * wallet sign each step. `review: false` signs without stopping to show
   * (the QA test wallet, which asks nobody).
   */
  async function runWallet(ui, flow, ethereum, { review = true } = {}) {
    const done = busy(ui.button, "Aguardando a carteira…");
    let phase = "connect";
    try {
      if (!flow.next) {
        say(ui.feedback, "info", "Confirme a conexão na sua carteira.");
        const [walletAddress] = await ethereum.request({ method: "eth_requestAccounts" });
        const chainId = await ethereum.request({ method: "eth_chainId" });
        say(ui.feedback, "info", "Preparando o que a carteira vai assinar…");
        flow.next = await api("/wallet/start", { body: { walletAddress, chainId } });
        flow.walletAddress = walletAddress;
        // A renewal's fee is likely approved already: one signature, unless the service asks for the fee next.
        const feeToApprove = flow.next.builderFeeTenthsBps > 0 && !state.session.renewal;
        flow.total = flow.next.step === "AGENT" && feeToApprove ? 2 : 1;
        flow.agentValidUntil = flow.next.agent?.validUntil ?? null;
        if (flow.next.step && review) return showReview(ui, flow, done);
      }
      while (flow.next.step) {
        phase = "sign";
        say(ui.feedback, "info", stepText(flow.next, flow.total));
        const signature = await ethereum.request({
          method: "eth_signTypedData_v4",
          params: [flow.walletAddress, JSON.stringify(flow.next.typedData)],
        });
        say(ui.feedback, "info", "Assinatura recebida. Registrando na corretora…");
        const next = await api("/wallet/sign", { body: { signature } });
        if (flow.next.step === "AGENT" && next.step === "BUILDER") flow.total = 2;
        flow.next = next;
        if (next.step && review) return showReview(ui, flow, done);
      }
      showConnected([], flow.next.walletAddress, flow.agentValidUntil);
    } catch (error) {
      done();
      if (error instanceof ApiFailure) {
        // A refused signature ends the pending step: the next try starts again.
        flow.next = null;
        ui.review.replaceChildren();
        ui.startLabel = ui.firstLabel;
        ui.button.textContent = ui.startLabel;
        return walletRefusal(error, ui);
      }
      say(ui.feedback, "error", walletErrorText(error, phase));
      if (phase === "connect") flow.next = null;
    }
  }

  /** The step to sign, shown in full; the wallet opens only when the client asks. */
  function showReview(ui, flow, done) {
    done();
    ui.review.replaceChildren(reviewCard(flow.next));
    // The general explanation folds away: what the wallet will show is what to read now.
    for (const details of app.querySelectorAll("details")) details.open = false;
    ui.review.scrollIntoView({ block: "start" });
    const counter = flow.total > 1 ? ` (${flow.next.step === "AGENT" ? 1 : 2} de ${flow.total})` : "";
    ui.startLabel = `Assinar na carteira${counter}`;
    ui.button.textContent = ui.startLabel;
    say(ui.feedback, "info", `${stepTitle(flow.next)}. Confira acima e ${tap} em “${ui.startLabel}”.`);
  }

  // ------------------------------------------------------------------ no wallet here: carry the link to one

  /**
   * Wallet apps that open a link in their own browser. Each gets the handoff
   * link (single-use), never the partner's. Where the wallet documents an app
   * scheme, it is used: the link then goes from this phone to the app and to
   * no vendor's server. MetaMask's https link keeps the fragment (and its
   * token) on the phone; Coinbase Wallet documents only an https link with the
   * whole URL in the query, which its link server sees, hence single-use.
   */
  const WALLET_LINKS = [
    // docs.metamask.io, "Use deeplinks": https://link.metamask.io/dapp/{dappUrl}, the URL without its scheme.
    ["MetaMask", (url) => `https://link.metamask.io/dapp/${url.replace(/^https?:\/\//, "")}`],
    // developer.trustwallet.com, "Deep Linking": every route also under trust://; open_url takes coin_id and url.
    ["Trust Wallet", (url) => `trust://open_url?coin_id=60&url=${encodeURIComponent(url)}`],
    // docs.cdp.coinbase.com, "Mobile dapp integration": https://go.cb-w.com/dapp?cb_url=<percent-encoded URL>.
    ["Coinbase Wallet", (url) => `https://go.cb-w.com/dapp?cb_url=${encodeURIComponent(url)}`],
    // web3.okx.com, "App Universal Link": okx://wallet/dapp/url?dappUrl=<encoded URL>.
    ["OKX Wallet", (url) => `okx://wallet/dapp/url?dappUrl=${encodeURIComponent(url)}`],
  ];

  /** The service's SVG of the handoff link's QR code, inlined (an image, even a data: one, would be a request). */
  function qrCode(markup) {
    const svg = new DOMParser().parseFromString(markup, "image/svg+xml").documentElement;
    svg.setAttribute("class", "qr");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "Código QR do link para abrir na carteira do celular");
    svg.setAttribute("width", "184");
    svg.setAttribute("height", "184");
    return svg;
  }

  async function showNoWallet() {
    const session = state.session;
    const phone = globalThis.matchMedia?.("(pointer: coarse)").matches ?? false;
    let handoff;
    try {
      handoff = await api("/handoff", {});
    } catch (error) {
      return showError(error);
    }
    const copy = el(
      "p",
      { class: "copy-line" },
      el("span", {}, "Link para a carteira (vale uma vez)"),
      kit.copyButton(handoff.url, "link para a carteira"),
    );
    const howTo = el(
      "p",
      {},
      "Outra carteira: copie o link, abra a carteira, toque em ",
      el("strong", {}, "Navegador"),
      " (ou Browser), cole o link e abra.",
    );
    const walletButtons = el(
      "div",
      { class: "wallet-links" },
      WALLET_LINKS.map(([name, link]) =>
        el("a", { class: "button secondary", href: link(handoff.url), rel: "noreferrer noopener" }, name)
      ),
    );
    const intro = `Sua conta ${session.providerName} é conectada pela sua carteira, e este navegador não tem uma.`;
    const feedback = feedbackArea();
    const ui = { button: null, feedback, review: el("div", {}) };
    show(
      header(),
      el("h1", {}, phone ? "Abra este link na sua carteira" : "Conecte com a sua carteira"),
      validity(),
      phone
        ? [
          el("p", {}, intro, " Escolha sua carteira: ela abre esta página no navegador dela."),
          walletButtons,
          howTo,
          copy,
        ]
        : [
          el("p", {}, intro),
          el(
            "ul",
            { class: "steps" },
            el(
              "li",
              {},
              "Instale uma extensão de carteira neste navegador (MetaMask, Rabby, Coinbase Wallet…) e recarregue a página; ou",
            ),
            el(
              "li",
              {},
              "continue no celular: leia o código abaixo com o leitor de QR da carteira (ou com a câmera) e abra o link no navegador da carteira.",
            ),
          ),
          qrCode(handoff.qrSvg),
          copy,
        ],
      message(
        "info",
        "O link da carteira vale uma vez: ao abri-lo lá, esta página deixa de funcionar e a conexão continua na carteira.",
      ),
      feedback,
      testWalletBox(ui, { walletAddress: null, next: null, total: 1 }),
      backButton(),
    );
  }

  // ------------------------------------------------------------------ the end

  /** `agentValidUntil`: the end of the agent just approved, when this page approved one. */
  function showConnected(warnings, walletAddress, agentValidUntil) {
    const session = state.session;
    const builderOnly = session.purpose === "BUILDER_APPROVAL";
    const renewed = !builderOnly && session.renewal && agentValidUntil;
    const heading = builderOnly ? "Taxa aprovada" : renewed ? "Autorização renovada" : "Conta conectada";
    title(heading);
    show(
      header(),
      el("h1", {}, heading),
      message(
        "success",
        builderOnly
          ? `Pronto! A taxa da plataforma foi aprovada na sua conta ${session.providerName}.`
          : renewed
          ? `Pronto! Sua conta ${session.providerName} continua conectada a ${session.partnerName}.`
          : `Pronto! Sua conta ${session.providerName} está conectada a ${session.partnerName}.`,
      ),
      agentValidUntil ? el("p", {}, "A autorização do agente vale até ", brasiliaDate(agentValidUntil), ".") : null,
      walletAddress ? kit.copyable("Carteira", walletAddress) : null,
      warnings.map((code) => warningOf(code, session)).filter(Boolean).map((text) =>
        message("warning", el("strong", {}, text[0]), ...text.slice(1))
      ),
      backButton() ?? el("p", { class: "muted" }, "Você já pode fechar esta página."),
    );
  }

  /** A session read after its end (a reload, Back): its outcome again. */
  function showEnded(session) {
    switch (session.status) {
      case "CONNECTED":
        return showConnected([]);
      case "EXPIRED":
        return showExpired();
      case "CANCELLED":
        return showFinal(
          "Link substituído ou encerrado",
          "Um link de conexão mais novo foi criado para você, e este deixou de valer.",
          `Use o link mais novo que ${session.partnerName} enviou.`,
        );
      default:
        return showFinal("Tentativas esgotadas", "As tentativas deste link acabaram.");
    }
  }

  // ------------------------------------------------------------------ start

  function retryable(error) {
    return error.code === "NETWORK" || error.status === 429 || error.status >= 500;
  }

  /** Exchange the token (in memory only, kept just long enough for a retry) for a page ticket, or read the session again. */
  async function open(token) {
    try {
      if (token) {
        const { ticket, session } = await api("/session", { body: { token } });
        state.ticket = ticket;
        state.session = session;
        sessionStorage.setItem(TICKET_KEY, ticket);
      } else {
        state.ticket = sessionStorage.getItem(TICKET_KEY);
        if (!state.ticket) {
          return showFinal(
            "Link incompleto",
            "Este endereço não traz o link de conexão. Abra o link completo que você recebeu.",
          );
        }
        state.session = (await api("/session", { method: "GET" })).session;
      }
    } catch (error) {
      if (error.code === "VALIDATION_ERROR" && error.field === "token") {
        return showFinal("Link inválido", error.message);
      }
      if (isFinal(error) || !retryable(error)) return showError(error);
      // Nothing was decided: the same link can be tried again from this page.
      const retry = el(
        "button",
        { type: "button", class: "button primary", onClick: () => open(token) },
        "Tentar de novo",
      );
      title("Não foi possível abrir o link");
      return show(
        header(),
        el("h1", {}, "Não foi possível abrir o link"),
        message("error", error.message),
        kit.actionBar(retry),
      );
    }
    endsAt = new Date(Date.now() + state.session.secondsLeft * 1000).toISOString();
    if (state.session.status !== "PENDING") return showEnded(state.session);
    if (state.session.scheme === "API_KEY") showApiKeyForm();
    else showWallet();
  }

  function start() {
    const token = new URLSearchParams(location.hash.slice(1)).get("t");
    // The token leaves the address bar (and the history entry) before anything else happens.
    if (location.hash) history.replaceState(null, "", location.pathname + location.search);
    state.ticket = null;
    state.session = null;
    if (token !== null && !TOKEN.test(token)) {
      return showFinal("Link inválido", "Este link de conexão está incompleto ou foi alterado.");
    }
    open(token);
  }

  // A second link opened in the same tab changes only the fragment: no reload, so start again here.
  addEventListener("hashchange", () => {
    if (new URLSearchParams(location.hash.slice(1)).has("t")) start();
  });

  start();
})();
