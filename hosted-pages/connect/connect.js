// The connect page's script. It reads the one-time token from the URL
// fragment, removes it from the address bar at once, exchanges it for a page
// ticket (kept in this tab's sessionStorage so a reload keeps working; the
// token itself is never stored) and then walks the client through the flow of
// the session's provider. Neither token nor ticket ever goes into a URL or the
// console: the token travels only in the exchange's body, the ticket only in
// an Authorization header.
"use strict";

(() => {
  const app = document.getElementById("app");
  const TICKET_KEY = "connect-ticket";
  const state = { ticket: null, session: null };

  // ------------------------------------------------------------------ DOM helpers (hosted-pages/page_kit.js)

  const kit = globalThis.pageKit(app);
  const { el, show, feedbackArea, message, say, busy, shortAddress, timeOf } = kit;

  /** Tenths of a basis point as a percentage: 25 -> "0,025%". */
  function feePercent(tenthsBps) {
    return `${(tenthsBps / 1000).toLocaleString("pt-BR", { maximumFractionDigits: 3 })}%`;
  }

  // ------------------------------------------------------------------ the page API

  const api = pageApi("/connect", () => state.ticket);

  /** Answers after which this link can do nothing more: the page ends with what to do. */
  const FINAL = {
    CONNECT_INVALID: "Link inválido",
    CONNECT_EXPIRED: "Link expirado",
    CONNECT_ALREADY_USED: "Link já utilizado",
    CONNECT_NOT_ACTIVE: "Link não está mais ativo",
    CONNECT_ATTEMPTS_EXHAUSTED: "Tentativas esgotadas",
    WRONG_SCHEME: "Link de outro provedor",
  };

  const isFinal = (error) => error instanceof ApiFailure && (error.code in FINAL || error.attemptsLeft === 0);

  /** A refusal's message, with the attempts it left when it counted as one. */
  function refusalText(error) {
    if (typeof error.attemptsLeft !== "number") return error.message;
    const left = error.attemptsLeft === 1 ? "Resta 1 tentativa." : `Restam ${error.attemptsLeft} tentativas.`;
    return `${error.message} ${left}`;
  }

  // ------------------------------------------------------------------ frame: who asks, until when, the way back

  /** Who asked and for which provider; while the link can still be used, until when. */
  function header({ open = true } = {}) {
    const session = state.session;
    const detail = open
      ? `${session?.providerName} · este link vale até as ${timeOf(session?.expiresAt)}`
      : session?.providerName;
    return kit.header(session?.partnerName, detail, "Conexão segura");
  }

  const backButton = () => kit.backButton(state.session);

  function showFinal(title, text) {
    sessionStorage.removeItem(TICKET_KEY);
    const who = state.session?.partnerName;
    kit.finalScreen(
      header({ open: false }),
      title,
      text,
      who
        ? `Para tentar de novo, volte para ${who} e peça um novo link de conexão.`
        : "Para tentar de novo, peça um novo link de conexão a quem enviou este.",
      backButton(),
    );
  }

  function showError(error) {
    if (error.attemptsLeft === 0) {
      return showFinal("Tentativas esgotadas", `${error.message} As tentativas deste link acabaram.`);
    }
    showFinal(FINAL[error.code] ?? "Não foi possível continuar", error.message);
  }

  /** What a refusal means for the screen: the end of the link, or a message and another try. */
  function handleRefusal(error, area) {
    if (isFinal(error)) return showError(error);
    say(area, "error", refusalText(error));
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

  const WARNINGS = {
    WITHDRAWALS_ENABLED: [
      "Esta chave permite saques.",
      " Conectamos a conta, mas recomendamos criar uma nova chave sem a permissão de saque e conectar de novo: assim ninguém consegue sacar com ela, nem se ela vazar.",
    ],
    IP_UNRESTRICTED: [
      "Esta chave não está restrita a um IP.",
      " Recomendamos restringi-la ao IP do serviço nas configurações da chave.",
    ],
  };

  function showApiKeyForm() {
    const session = state.session;
    const key = el("input", {
      id: "api-key",
      name: "apiKey",
      autocomplete: "off",
      autocapitalize: "off",
      autocorrect: "off",
      spellcheck: "false",
      required: true,
    });
    const secret = el("input", {
      id: "api-secret",
      name: "apiSecret",
      type: "password",
      autocomplete: "off",
      autocapitalize: "off",
      autocorrect: "off",
      spellcheck: "false",
      required: true,
    });
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
    const submit = el("button", { type: "submit", class: "button primary" }, "Conectar conta");
    const feedback = feedbackArea();

    async function connect(event) {
      event.preventDefault();
      const apiKey = key.value.trim();
      const apiSecret = secret.value.trim();
      if (!apiKey || !apiSecret) {
        say(feedback, "error", "Preencha a chave de API e a chave secreta.");
        (apiKey ? secret : key).focus();
        return;
      }
      const done = busy(submit, "Testando a chave…");
      say(feedback, "info", `Testando a chave na ${session.providerName}, só com leitura. Isso leva alguns segundos.`);
      try {
        const result = await api("/api-key", { body: { apiKey, apiSecret } });
        showConnected(result.warnings ?? []);
      } catch (error) {
        done();
        handleRefusal(error, feedback);
        if (!isFinal(error) && typeof error.attemptsLeft === "number") {
          secret.value = "";
          secret.focus();
        }
      }
    }

    show(
      header(),
      el("h1", {}, `Conecte sua conta ${session.providerName}`),
      el(
        "p",
        {},
        `Para ${session.partnerName} operar por você, crie na ${session.providerName} uma chave de API só para este serviço e cole-a aqui.`,
      ),
      el(
        "section",
        { class: "card", "aria-labelledby": "how-title" },
        el("h2", { id: "how-title" }, "Como criar a chave"),
        el(
          "ol",
          { class: "steps" },
          el(
            "li",
            {},
            "Em Gerenciamento de API, crie uma chave nova do tipo ",
            el("strong", {}, "HMAC"),
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
          el("li", {}, "Restrinja o acesso da chave ao ", el("strong", {}, "IP do serviço"), "."),
          el(
            "li",
            {},
            "Na conta de Futuros, use o modo de posição ",
            el("strong", {}, "única (One-way)"),
            ", margem de ",
            el("strong", {}, "ativo único"),
            " (Multi-Assets desligado) e ",
            el("strong", {}, "margem isolada"),
            ".",
          ),
          el("li", {}, "Copie a API Key e a Secret Key. A Secret Key só aparece uma vez na corretora."),
        ),
      ),
      el(
        "form",
        { novalidate: true, onSubmit: connect },
        el("label", { for: "api-key" }, "Chave de API (API Key)"),
        key,
        el("div", { class: "label-row" }, el("label", { for: "api-secret" }, "Chave secreta (Secret Key)"), toggle),
        secret,
        feedback,
        submit,
      ),
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
          "Nada aqui usa dinheiro real: o botão cria uma conta de teste com saldo no simulador e preenche o formulário.",
          async (button) => {
            const done = busy(button, "Criando conta de teste…");
            try {
              const keys = await api("/qa/test-credentials", { body: {} });
              key.value = keys.apiKey;
              secret.value = keys.apiSecret;
              say(feedback, "info", "Conta de teste criada e formulário preenchido. Clique em Conectar conta.");
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

  const STEP_TITLE = {
    AGENT: "Autorize o agente de negociação",
    BUILDER: (fee) => `Aprove a taxa da plataforma de até ${feePercent(fee)} por operação`,
  };

  function stepText(next, total) {
    const counter = total > 1 ? `Assinatura ${next.step === "AGENT" ? 1 : total} de ${total}: ` : "";
    const title = next.step === "AGENT" ? STEP_TITLE.AGENT : STEP_TITLE.BUILDER(next.builderFeeTenthsBps);
    return `${counter}${title}. Confira e assine na sua carteira.`;
  }

  function showWallet() {
    const session = state.session;
    const builderOnly = session.purpose === "BUILDER_APPROVAL";
    const feedback = feedbackArea();
    // The step the wallet was last asked to sign: after a cancel, "try again" resumes it.
    const flow = { walletAddress: null, next: null, total: 1 };
    const start = el(
      "button",
      { type: "button", class: "button primary", onClick: () => runWallet(start, feedback, flow, globalThis.ethereum) },
      builderOnly ? "Conectar carteira e aprovar" : "Conectar carteira",
    );

    show(
      header(),
      el(
        "h1",
        {},
        builderOnly ? "Aprove a taxa da plataforma" : `Conecte sua carteira à conta ${session.providerName}`,
      ),
      builderOnly
        ? el(
          "p",
          {},
          `Conecte a mesma carteira que você já vinculou e aprove, na carteira, a taxa da plataforma (builder) que ${session.partnerName} cobra por operação.`,
        )
        : el(
          "p",
          {},
          `Para ${session.partnerName} operar por você, sua carteira autoriza um agente de negociação. Você assina na própria carteira; nenhuma chave sua sai dela.`,
        ),
      el(
        "section",
        { class: "card", "aria-labelledby": "what-title" },
        el("h2", { id: "what-title" }, "O que você vai assinar"),
        el(
          "ul",
          { class: "steps" },
          builderOnly ? null : el(
            "li",
            {},
            el("strong", {}, "Um agente de negociação"),
            ": ele pode abrir e fechar posições por você, mas ",
            el("strong", {}, "não pode sacar nem transferir"),
            " seus fundos.",
          ),
          el(
            "li",
            {},
            el("strong", {}, "A taxa da plataforma"),
            builderOnly
              ? ": um limite máximo, em percentual de cada operação, que você verá na carteira."
              : ", se houver: um limite máximo por operação, mostrado antes de assinar.",
          ),
          el("li", {}, "Assinar não movimenta fundos nem custa taxa de rede."),
        ),
      ),
      feedback,
      start,
      // A fresh test wallet cannot approve for the wallet that is already connected.
      session.qa && !builderOnly && globalThis.createTestWallet
        ? testBox(
          "Usar carteira de teste",
          "Nada aqui usa dinheiro real: o botão cria, nesta página, uma carteira de teste com saldo no simulador, que assina sozinha.",
          (button) => useTestWallet(button, feedback, flow),
        )
        : null,
      backButton(),
    );
  }

  /** QA: a wallet made in this page (its key lives only in this page's memory), funded on the simulator. */
  async function useTestWallet(button, feedback, flow) {
    const done = busy(button, "Criando carteira de teste…");
    let wallet;
    try {
      wallet = globalThis.createTestWallet();
      await api("/qa/test-credentials", { body: { walletAddress: wallet.address } });
    } catch (error) {
      done();
      return handleRefusal(error, feedback);
    }
    say(feedback, "info", `Carteira de teste ${shortAddress(wallet.address)} criada com saldo de teste.`);
    done();
    flow.next = null;
    await runWallet(button, feedback, flow, wallet);
  }

  async function runWallet(button, feedback, flow, ethereum) {
    if (!ethereum?.request) {
      say(
        feedback,
        "error",
        "Nenhuma carteira encontrada neste navegador. Abra este link no navegador da sua carteira (no celular) ou instale uma extensão de carteira e recarregue a página.",
      );
      return;
    }
    const done = busy(button, "Aguardando a carteira…");
    let phase = "connect";
    try {
      say(feedback, "info", "Confirme a conexão na sua carteira.");
      const [walletAddress] = await ethereum.request({ method: "eth_requestAccounts" });
      // Resume the step a cancel interrupted, unless the wallet changed meanwhile.
      if (!flow.next || walletAddress?.toLowerCase() !== flow.walletAddress) {
        const chainId = await ethereum.request({ method: "eth_chainId" });
        say(feedback, "info", "Preparando o que a carteira vai assinar…");
        flow.next = await api("/wallet/start", { body: { walletAddress, chainId } });
        flow.walletAddress = walletAddress.toLowerCase();
        flow.total = flow.next.step === "AGENT" && flow.next.builderFeeTenthsBps > 0 ? 2 : 1;
      }
      while (flow.next.step) {
        phase = "sign";
        say(feedback, "info", stepText(flow.next, flow.total));
        const signature = await ethereum.request({
          method: "eth_signTypedData_v4",
          params: [walletAddress, JSON.stringify(flow.next.typedData)],
        });
        say(feedback, "info", "Assinatura recebida. Registrando na corretora…");
        const next = await api("/wallet/sign", { body: { signature } });
        flow.next = next.step ? next : { status: next.status };
      }
      flow.next = null;
      showConnected([], walletAddress);
    } catch (error) {
      done();
      if (error instanceof ApiFailure) {
        // A refused signature ends the pending step: the next try starts again.
        flow.next = null;
        return handleRefusal(error, feedback);
      }
      say(feedback, "error", walletErrorText(error, phase));
      if (phase === "connect") flow.next = null;
    }
  }

  // ------------------------------------------------------------------ the end

  function showConnected(warnings, walletAddress) {
    sessionStorage.removeItem(TICKET_KEY);
    const session = state.session;
    const builderOnly = session.purpose === "BUILDER_APPROVAL";
    show(
      header({ open: false }),
      el("h1", {}, builderOnly ? "Taxa aprovada" : "Conta conectada"),
      message(
        "success",
        builderOnly
          ? `Pronto! A taxa da plataforma foi aprovada na sua conta ${session.providerName}.`
          : `Pronto! Sua conta ${session.providerName} está conectada a ${session.partnerName}.`,
      ),
      walletAddress ? el("p", { class: "muted" }, `Carteira ${shortAddress(walletAddress)}`) : null,
      warnings.filter((code) => WARNINGS[code]).map((code) =>
        message("warning", el("strong", {}, WARNINGS[code][0]), WARNINGS[code][1])
      ),
      backButton() ?? el("p", { class: "muted" }, "Você já pode fechar esta página."),
    );
  }

  // ------------------------------------------------------------------ start

  /** Exchange the token (in memory only, kept just long enough for a retry) for a page ticket. */
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
      if (isFinal(error) || !(error.code === "NETWORK" || error.status === 429 || error.status >= 500)) {
        return showError(error);
      }
      // Nothing was decided: the same link can be tried again from this page.
      const retry = el(
        "button",
        { type: "button", class: "button primary", onClick: () => open(token) },
        "Tentar de novo",
      );
      return show(header(), el("h1", {}, "Não foi possível abrir o link"), message("error", error.message), retry);
    }
    if (state.session.scheme === "API_KEY") showApiKeyForm();
    else showWallet();
  }

  function start() {
    const token = new URLSearchParams(location.hash.slice(1)).get("t");
    // The token leaves the address bar (and the history entry) before anything else happens.
    if (location.hash) history.replaceState(null, "", location.pathname + location.search);
    state.ticket = null;
    state.session = null;
    open(token);
  }

  // A second link opened in the same tab changes only the fragment: no reload, so start again here.
  addEventListener("hashchange", () => {
    if (new URLSearchParams(location.hash.slice(1)).has("t")) start();
  });

  start();
})();
