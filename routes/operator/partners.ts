/** Operator: partners, their contract versions, status and credentials. */
import { routeGroup } from "../route_group.ts";
import { json, shaped } from "../respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { rotateCredential } from "../../domain/credentials/issue_credential.ts";
import { revokeCredential } from "../../domain/credentials/revoke_credential.ts";
import { createPartner } from "../../domain/partners/create_partner.ts";
import { operatorPartnerView } from "../../domain/partners/partner_view.ts";
import { setPartnerStatus } from "../../domain/partners/set_partner_status.ts";
import { setContractSuspended, updateContract } from "../../domain/partners/update_contract.ts";
import { updatePartner } from "../../domain/partners/update_partner.ts";
import { operatorCtx } from "../env.ts";
import { jsonBody, jsonContent, operatorErrors, optionalJsonBody, RequestId } from "../schemas/common.ts";
import { throwOnInvalid } from "../validation.ts";
import {
  ContractTermsSchema,
  CreatePartnerBody,
  CredentialSchema,
  OperatorPartner,
  ReasonBody,
  UpdatePartnerBody,
} from "./schemas.ts";
import * as examples from "../schemas/examples.ts";

const PartnerParams = z.object({ partnerId: z.string().min(1).max(64) });
const PartnerResponse = z.object({ partner: OperatorPartner, requestId: RequestId });
const CreatedPartnerResponse = z.object({
  partner: OperatorPartner,
  credential: CredentialSchema,
  requestId: RequestId,
});
const tags = ["Operator: partners"];

/** The reasons those calls gave. */
const PARTNER_STATUS_REASONS = {
  SUSPENDED: "Auditoria de segurança",
  ACTIVE: "Auditoria concluída",
  REVOKED: "Contrato encerrado",
} as const;

/** How long the credentials a new one replaces keep working. */
const CredentialBody = z.object({ overlapSeconds: z.number().int().min(0).max(30 * 86400).optional() });

/** What the status routes answered on QA (revoked: a second partner, since revoking is for good). */
const PARTNER_STATUS_EXAMPLES = {
  SUSPENDED: examples.partnerSuspended,
  ACTIVE: examples.partnerReactivated,
  REVOKED: examples.partnerRevoked,
} as const;

const app = routeGroup();

app.openapi(
  createRoute({
    method: "post",
    path: "/operator/v1/partners",
    operationId: "createPartner",
    description:
      "Creates an ACTIVE partner (its tenant has the same id) with its grants, risk envelope, builder fee, " +
      "return-URL origins, limits and contract version 1 in force from now, and issues its first credential: the " +
      "client secret is in this answer only. Emits `tenant.updated` (CREATED) and `credential.issued`.\n\nErrors: " +
      "400 VALIDATION_ERROR, 409 VALIDATION_ERROR (the partnerId exists).",
    tags,
    summary: "Create a partner with its contract and first credential",
    request: {
      body: jsonBody(CreatePartnerBody, {
        partnerId: "acme",
        name: "Acme Corretora",
        grants: examples.partnerCreated.partner.grants,
        riskEnvelope: examples.partnerCreated.partner.riskEnvelope,
        contract: {
          subscriptionMonthlyUsd: 49.9,
          currency: "USDT",
          performanceFeePercent: 0.2,
          performancePeriod: "MONTHLY",
          carryPolicy: "CARRY",
          dueDays: 5,
          subscriptionProviders: ["VENUE_A"],
        },
        builder: { feeTenthsBps: 25 },
        returnUrlOrigins: ["https://app.acme.example"],
        limits: { requestsPerMinute: 600, ordersPerMinute: 60 },
      }),
    },
    responses: {
      201: jsonContent(CreatedPartnerResponse, "Created; the secret is shown once.", examples.partnerCreated),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const out = await createPartner({ ctx: operatorCtx(c), input: c.req.valid("json") });
    return json(c, shaped(CreatedPartnerResponse, { ...out, requestId: c.get("requestId") }), 201);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/partners/{partnerId}",
    operationId: "getPartner",
    description: "The partner with its settings, the contract in force, a scheduled contract version and the " +
      "partner's own restrictions. Changes nothing.\n\nErrors: 404 unknown partner.",
    tags,
    summary: "Read a partner",
    request: { params: PartnerParams },
    responses: { 200: jsonContent(PartnerResponse, "The partner.", examples.partner), ...operatorErrors },
  }),
  async (c) => {
    const { db, clock } = c.get("deps");
    const partner = await operatorPartnerView(db.read, c.req.valid("param").partnerId, clock.now());
    return json(c, shaped(PartnerResponse, { partner, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "patch",
    path: "/operator/v1/partners/{partnerId}",
    operationId: "updatePartner",
    description: "Changes only the fields sent (name, grants, risk envelope, builder fee, return-URL origins, " +
      "limits), at once and for every client of the partner; recorded in the audit log. Emits `tenant.updated` " +
      "(SETTINGS, with the fields changed).\n\nErrors: 404 unknown partner.",
    tags,
    summary: "Change grants, envelope, builder fee, return-URL origins or limits",
    request: {
      params: PartnerParams,
      body: jsonBody(UpdatePartnerBody, { limits: { requestsPerMinute: 1200, ordersPerMinute: 120 } }),
    },
    responses: { 200: jsonContent(PartnerResponse, "The partner.", examples.partnerUpdated), ...operatorErrors },
  }),
  async (c) => {
    const partner = await updatePartner({
      ctx: operatorCtx(c),
      input: { partnerId: c.req.valid("param").partnerId, changes: c.req.valid("json") },
    });
    return json(c, shaped(PartnerResponse, { partner, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/partners/{partnerId}/contract",
    operationId: "putPartnerContract",
    description: "Writes the next contract version (whole terms), in force from the next period boundary; until " +
      "then it is `scheduledContract` and the current version keeps billing. Emits `tenant.updated` " +
      "(CONTRACT_SCHEDULED, with the version and when it takes effect).\n\nErrors: 404 unknown partner.",
    tags,
    summary: "New contract version, effective from the next period boundary",
    request: {
      params: PartnerParams,
      body: jsonBody(ContractTermsSchema, {
        subscriptionMonthlyUsd: 59.9,
        currency: "USDT",
        performanceFeePercent: 0.2,
        performancePeriod: "MONTHLY",
        carryPolicy: "CARRY",
        dueDays: 5,
        subscriptionProviders: ["VENUE_A"],
      }),
    },
    responses: {
      200: jsonContent(PartnerResponse, "The partner with its scheduled contract.", examples.contractScheduled),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const partner = await updateContract({
      ctx: operatorCtx(c),
      input: { partnerId: c.req.valid("param").partnerId, terms: c.req.valid("json") },
    });
    return json(c, shaped(PartnerResponse, { partner, requestId: c.get("requestId") }), 200);
  },
);

for (const [action, suspended] of [["suspend", true], ["resume", false]] as const) {
  app.openapi(
    createRoute({
      method: "post",
      path: `/operator/v1/partners/{partnerId}/contract/${action}`,
      operationId: `${action}PartnerContract`,
      tags,
      summary: `${suspended ? "Suspend" : "Resume"} the contract at once`,
      description: (suspended
        ? "Suspends the contract in force (and any scheduled version) at once: the partner's clients open no new " +
          "entries (B2B_ACCESS_SUSPENDED) while reads, closes and position maintenance continue. "
        : "Resumes the suspended contract at once: new entries may open again where the other gates allow. ") +
        "The reason is recorded in the audit log. Emits `tenant.updated` (" +
        (suspended ? "CONTRACT_SUSPENDED" : "CONTRACT_RESUMED") +
        "); when it already is, nothing changes and nothing is emitted.\n\nErrors: 404 unknown partner.",
      request: {
        params: PartnerParams,
        body: jsonBody(z.object({ reason: z.string().min(3).max(500) }), {
          reason: suspended ? "Fatura de novembro em aberto" : "Fatura paga",
        }),
      },
      responses: {
        200: jsonContent(
          PartnerResponse,
          "The partner.",
          suspended ? examples.contractSuspended : examples.contractResumed,
        ),
        ...operatorErrors,
      },
    }),
    async (c) => {
      const partner = await setContractSuspended({
        ctx: operatorCtx(c),
        input: { partnerId: c.req.valid("param").partnerId, suspended, reason: c.req.valid("json").reason },
      });
      return json(c, shaped(PartnerResponse, { partner, requestId: c.get("requestId") }), 200);
    },
  );
}

for (const [action, status] of [["suspend", "SUSPENDED"], ["reactivate", "ACTIVE"], ["revoke", "REVOKED"]] as const) {
  app.openapi(
    createRoute({
      method: "post",
      path: `/operator/v1/partners/{partnerId}/${action}`,
      operationId: `${action}Partner`,
      tags,
      summary: `Set the partner ${status}`,
      description: "Sets the partner " + status + ": " + {
        SUSPENDED: "its credentials answer 403 PRINCIPAL_NOT_ACTIVE until it is reactivated",
        ACTIVE: "its credentials work again",
        REVOKED: "for good (the end of the relationship; no way back); its credentials answer 403 " +
          "PRINCIPAL_NOT_ACTIVE",
      }[status] + ". The optional reason is recorded in the audit log. Emits `tenant.updated` (STATUS)." +
        "\n\nErrors: 404 unknown partner, 409 VALIDATION_ERROR (not allowed from its status: REVOKED is final).",
      request: {
        params: PartnerParams,
        body: optionalJsonBody(ReasonBody, { reason: PARTNER_STATUS_REASONS[status] }),
      },
      responses: {
        200: jsonContent(PartnerResponse, "The partner.", PARTNER_STATUS_EXAMPLES[status]),
        ...operatorErrors,
      },
    }),
    async (c) => {
      const body = ReasonBody.safeParse(c.get("jsonBody") ?? {});
      throwOnInvalid(body);
      const partner = await setPartnerStatus({
        ctx: operatorCtx(c),
        input: { partnerId: c.req.valid("param").partnerId, status, reason: body.data?.reason },
      });
      return json(c, shaped(PartnerResponse, { partner, requestId: c.get("requestId") }), 200);
    },
  );
}

app.openapi(
  createRoute({
    method: "post",
    path: "/operator/v1/partners/{partnerId}/credentials",
    operationId: "createPartnerCredential",
    description: "Issues a new credential (secret in this answer only). The partner's other live credentials stay " +
      "valid for `overlapSeconds` more (default 86,400; 0 ends them now), never longer than they had. Emits " +
      "`credential.issued` (with the ids it replaces).\n\nErrors: 404 unknown partner.",
    tags,
    summary: "Issue a new credential; the others stay valid until the overlap ends",
    request: {
      params: PartnerParams,
      body: optionalJsonBody(CredentialBody, { overlapSeconds: 3600 }),
    },
    responses: {
      201: jsonContent(
        z.object({ credential: CredentialSchema, requestId: RequestId }),
        "Issued; shown once.",
        examples.credentialIssued,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const body = CredentialBody.safeParse(c.get("jsonBody") ?? {});
    throwOnInvalid(body);
    const credential = await rotateCredential({
      ctx: operatorCtx(c),
      input: { partnerId: c.req.valid("param").partnerId, overlapSeconds: body.data?.overlapSeconds },
    });
    return json(c, { credential, requestId: c.get("requestId") }, 201);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path: "/operator/v1/partners/{partnerId}/credentials/{clientId}",
    operationId: "revokePartnerCredential",
    description: "Revokes one credential at once: its next call answers 401 B2B_CREDENTIAL_INVALID. Emits " +
      "`credential.revoked`.\n\nErrors: 404 unknown partner or credential.",
    tags,
    summary: "Revoke a credential at once",
    request: { params: PartnerParams.extend({ clientId: z.string().min(1).max(64) }) },
    responses: {
      200: jsonContent(
        z.object({ clientId: z.string(), revokedAt: z.string(), requestId: RequestId }),
        "Revoked.",
        examples.credentialRevoked,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const out = await revokeCredential({ ctx: operatorCtx(c), input: c.req.valid("param") });
    return json(c, {
      clientId: out.clientId,
      revokedAt: new Date(out.revokedAt).toISOString(),
      requestId: c.get("requestId"),
    }, 200);
  },
);

export const operatorPartners = app;
