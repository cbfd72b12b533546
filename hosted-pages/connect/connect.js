// The connect page's script. It reads the one-time token from the URL
// fragment, removes it from the address bar at once, exchanges it for a page
// ticket (kept in this tab's sessionStorage so a reload keeps working) and
// then walks the client through the flow of the session's provider. Neither
// token nor ticket ever goes into a URL or the console.
"use strict";

(() => {
  const app = document.getElementById("app");
  const TICKET_KEY = "connect-ticket";
  const state = { ticket: null, session: null };

  // ------------------------------------------------------------------ helpers

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === false || value === null || value === undefined) continue;
      if (name === "onClick") node.addEventListener("click", value);
      else if (name === "onSubmit") node.addEventListener("submit", value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(typeof child === "string" ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  function show(...children) {
    app.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
    const heading = app.querySelector("h1, h2");
    if (heading) {
      heading.setAttribute("tabindex", "-1");
      heading.focus();
    }
  }

  async function api(path, { method = "POST", body } = {}) {
    const headers = { "content-type": "application/json" };
    if (state.ticket) headers.authorization = `Bearer ${state.ticket}`;
    let response;
    try {
      response = await fetch(`/connect/api${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: "omit",
        cache: "no-store",
      });
    } catch {
      throw Object.assign(new Error("Sem conexão com o servidor. Verifique sua internet e tente de novo."), {
        code: "NETWORK",
      });
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw Object.assign(new Error(data.error?.message ?? "Algo deu errado. Tente de novo."), {
        code: data.error?.code,
        attemptsLeft: data.attemptsLeft,
      });
    }
    return data;
  }

  /** Errors after which this link can do nothing more. */
  const FINAL = new Set([
    "CONNECT_INVALID",
    "CONNECT_EXPIRED",
    "CONNECT_ALREADY_USED",
    "CONNECT_NOT_ACTIVE",
    "CONNECT_ATTEMPTS_EXHAUSTED",
    "WRONG_SCHEME",
    "TOO_MANY_REQUESTS",
  ]);

  function isFinal(error) {
    return FINAL.has(error.code) || error.attemptsLeft === 0;
  }

  function backButton() {
    const session = state.session;
    if (!session?.returnUrl) return null;
    return el(
      "a",
      { class: "button secondary", href: session.returnUrl, rel: "noreferrer" },
      `Voltar para ${session.partnerName}`,
    );
  }

  function header() {
    const session = state.session;
    return el(
      "header",
      {},
      el("p", { class: "eyebrow" }, session ? `Solicitado por ${session.partnerName}` : "Conexão segura"),
      session ? el("p", { class: "muted" }, `O link expira às ${timeOf(session.expiresAt)}.`) : null,
    );
  }

  function timeOf(iso) {
    return new Date(iso).toLocaleTimeString("pt-BR", { hour: "2-digit", minute: "2-digit" });
  }

  function message(kind, text) {
    return el("p", { class: `message ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
  }

  function showFinal(title, text) {
    show(header(), el("h1", {}, title), message("error", text), backButton());
  }

  function showError(error) {
    if (error.attemptsLeft === 0) {
      return showFinal(
        "Tentativas esgotadas",
        `${error.message} As tentativas deste link acabaram: peça um novo link.`,
      );
    }
    const titles = {
      CONNECT_EXPIRED: "Link expirado",
      CONNECT_ALREADY_USED: "Link já utilizado",
      CONNECT_ATTEMPTS_EXHAUSTED: "Tentativas esgotadas",
      CONNECT_INVALID: "Link inválido",
    };
    showFinal(titles[error.code] ?? "Não foi possível continuar", error.message);
  }

  function busy(button, text) {
    const original = button.textContent;
    button.disabled = true;
    button.textContent = text;
    return () => {
      button.disabled = false;
      button.textContent = original;
    };
  }

  function refusalText(error) {
    if (error.attemptsLeft === undefined) return error.message;
    const left = error.attemptsLeft === 1 ? "Resta 1 tentativa." : `Restam ${error.attemptsLeft} tentativas.`;
    return `${error.message} ${left}`;
  }

  // ------------------------------------------------------------------ API key flow (VENUE_A)

  const WARNINGS = {
    WITHDRAWALS_ENABLED:
      "Atenção: esta chave permite saques. Para sua segurança, crie uma chave sem permissão de saque e conecte de novo.",
    IP_UNRESTRICTED: "Esta chave não está restrita a um IP. Recomendamos restringi-la ao IP do serviço.",
  };

  function showApiKeyForm(notice) {
    const session = state.session;
    const key = el("input", {
      id: "api-key",
      name: "apiKey",
      autocomplete: "off",
      autocapitalize: "off",
      spellcheck: "false",
      required: true,
    });
    const secret = el("input", {
      id: "api-secret",
      name: "apiSecret",
      type: "password",
      autocomplete: "off",
      spellcheck: "false",
      required: true,
    });
    const toggle = el("button", {
      type: "button",
      class: "link",
      "aria-controls": "api-secret",
      onClick: () => {
        const hidden = secret.type === "password";
        secret.type = hidden ? "text" : "password";
        toggle.textContent = hidden ? "Ocultar" : "Mostrar";
      },
    }, "Mostrar");
    const submit = el("button", { type: "submit", class: "button primary" }, "Conectar");
    const feedback = el("div", { id: "feedback", "aria-live": "polite" }, notice ?? null);
    const form = el(
      "form",
      {
        novalidate: true,
        onSubmit: async (event) => {
          event.preventDefault();
          if (!key.value.trim() || !secret.value.trim()) {
            feedback.replaceChildren(message("error", "Preencha a chave de API e a chave secreta."));
            return;
          }
          const done = busy(submit, "Testando a chave…");
          feedback.replaceChildren(message("info", "Testando a chave na corretora (somente leitura)…"));
          try {
            const result = await api("/api-key", {
              body: { apiKey: key.value.trim(), apiSecret: secret.value.trim() },
            });
            showConnected(result.warnings ?? []);
          } catch (error) {
            done();
            if (isFinal(error)) return showError(error);
            feedback.replaceChildren(message("error", refusalText(error)));
            secret.value = "";
          }
        },
      },
      el("label", { for: "api-key" }, "Chave de API (API Key)"),
      key,
      el("div", { class: "label-row" }, el("label", { for: "api-secret" }, "Chave secreta (Secret Key)"), toggle),
      secret,
      feedback,
      submit,
    );

    show(
      header(),
      el("h1", {}, `Conecte sua conta da ${session.providerName}`),
      el("p", {}, "Crie uma chave de API exclusiva para este serviço e cole-a abaixo:"),
      el(
        "ol",
        { class: "steps" },
        el("li", {}, "Na corretora, crie uma chave de API do tipo HMAC só para este serviço."),
        el("li", {}, "Ative a permissão de Futuros e deixe os saques desativados."),
        el("li", {}, "Restrinja a chave ao endereço IP do serviço."),
        el("li", {}, "Na conta de Futuros, use o modo de posição única (One-way) e margem de ativo único."),
      ),
      form,
      el(
        "p",
        { class: "muted" },
        "Testamos a chave apenas para leitura e a guardamos criptografada. Ela nunca é exibida de volta.",
      ),
      session.qa
        ? testBox("Usar conta de teste", async (button) => {
          const done = busy(button, "Criando conta de teste…");
          try {
            const keys = await api("/qa/test-credentials", { body: {} });
            key.value = keys.apiKey;
            secret.value = keys.apiSecret;
            feedback.replaceChildren(message("info", "Conta de teste criada. Clique em Conectar."));
          } catch (error) {
            feedback.replaceChildren(message("error", error.message));
          } finally {
            done();
          }
        })
        : null,
      backButton(),
    );
  }

  function testBox(label, action) {
    const button = el("button", { type: "button", class: "button secondary", onClick: () => action(button) }, label);
    return el(
      "aside",
      { class: "sandbox" },
      el("strong", {}, "Ambiente de testes"),
      el("p", {}, "Nada aqui usa dinheiro real: contas e carteiras de teste existem só no simulador."),
      button,
    );
  }

  // ------------------------------------------------------------------ wallet flow (VENUE_B)

  function feePercent(tenthsBps) {
    return `${(tenthsBps / 1000).toLocaleString("pt-BR", { maximumFractionDigits: 3 })}%`;
  }

  function showWallet(notice) {
    const session = state.session;
    const start = el(
      "button",
      { type: "button", class: "button primary", onClick: () => runWallet(start, feedback, globalThis.ethereum) },
      "Conectar carteira",
    );
    const feedback = el("div", { id: "feedback", "aria-live": "polite" }, notice ?? null);
    const builderOnly = session.purpose === "BUILDER_APPROVAL";
    show(
      header(),
      el("h1", {}, builderOnly ? "Aprove a taxa de builder" : `Conecte sua carteira à ${session.providerName}`),
      builderOnly
        ? el("p", {}, "Conecte a mesma carteira já vinculada e aprove, na carteira, a taxa de builder da plataforma.")
        : el(
          "p",
          {},
          "Você vai assinar na sua carteira a autorização de um agente que opera por você. O agente pode abrir e fechar posições, mas não pode sacar nem transferir seus fundos.",
        ),
      el(
        "p",
        { class: "muted" },
        "Nenhuma assinatura movimenta fundos. Confira na carteira o que está sendo assinado.",
      ),
      feedback,
      start,
      // A fresh test wallet cannot approve for the wallet already connected.
      session.qa && !builderOnly && globalThis.createTestWallet
        ? testBox("Usar carteira de teste", (button) => useTestWallet(button, feedback))
        : null,
      backButton(),
    );
  }

  /** QA: a wallet made in this page, funded on the simulator, that signs by itself. */
  async function useTestWallet(button, feedback) {
    const wallet = globalThis.createTestWallet();
    const done = busy(button, "Criando carteira de teste…");
    try {
      await api("/qa/test-credentials", { body: { walletAddress: wallet.address } });
      feedback.replaceChildren(
        message("info", `Carteira de teste ${wallet.address.slice(0, 8)}… criada com saldo de teste.`),
      );
    } catch (error) {
      feedback.replaceChildren(message("error", error.message));
      return done();
    }
    done();
    await runWallet(button, feedback, wallet);
  }

  const STEP_TEXT = {
    AGENT: () => "Assine, na carteira, a autorização do agente de negociação.",
    BUILDER: (fee) => `Assine, na carteira, a aprovação da taxa de builder de até ${feePercent(fee)} por operação.`,
  };

  async function runWallet(button, feedback, ethereum) {
    if (!ethereum) {
      feedback.replaceChildren(
        message(
          "error",
          "Nenhuma carteira encontrada neste navegador. Abra este link no navegador da sua carteira ou instale uma extensão de carteira.",
        ),
      );
      return;
    }
    const done = busy(button, "Aguardando a carteira…");
    try {
      const [walletAddress] = await ethereum.request({ method: "eth_requestAccounts" });
      const chainId = await ethereum.request({ method: "eth_chainId" });
      let next = await api("/wallet/start", { body: { walletAddress, chainId } });
      while (next.step) {
        feedback.replaceChildren(message("info", STEP_TEXT[next.step](next.builderFeeTenthsBps)));
        const signature = await ethereum.request({
          method: "eth_signTypedData_v4",
          params: [walletAddress, JSON.stringify(next.typedData)],
        });
        feedback.replaceChildren(message("info", "Enviando a assinatura…"));
        next = await api("/wallet/sign", { body: { signature } });
      }
      showConnected([]);
    } catch (error) {
      done();
      if (error.code === 4001) {
        feedback.replaceChildren(message("error", "Assinatura cancelada na carteira. Você pode tentar de novo."));
      } else if (isFinal(error)) {
        showError(error);
      } else {
        feedback.replaceChildren(message("error", refusalText(error)));
      }
    }
  }

  // ------------------------------------------------------------------ the end

  function showConnected(warnings) {
    sessionStorage.removeItem(TICKET_KEY);
    show(
      header(),
      el("h1", {}, "Conta conectada"),
      message(
        "success",
        `Pronto! Sua conta da ${state.session.providerName} está conectada a ${state.session.partnerName}.`,
      ),
      warnings.filter((code) => WARNINGS[code]).map((code) => message("warning", WARNINGS[code])),
      backButton() ?? el("p", { class: "muted" }, "Você já pode fechar esta página."),
    );
  }

  // ------------------------------------------------------------------ start

  async function start() {
    const token = new URLSearchParams(location.hash.slice(1)).get("t");
    // The token leaves the address bar (and the history) before anything else happens.
    if (location.hash) history.replaceState(null, "", location.pathname);
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
            "Abra o link completo que você recebeu. Se ele não funcionar, peça um novo.",
          );
        }
        state.session = (await api("/session", { method: "GET" })).session;
      }
    } catch (error) {
      sessionStorage.removeItem(TICKET_KEY);
      return showError(error);
    }
    if (state.session.scheme === "API_KEY") showApiKeyForm();
    else showWallet();
  }

  // A second link opened in the same tab changes only the fragment: no reload, so start again here.
  addEventListener("hashchange", () => {
    if (new URLSearchParams(location.hash.slice(1)).has("t")) start();
  });

  start();
})();
