/** Operator: partners, their contract versions, status and credentials. */
import { json } from "../respond.ts";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { rotateCredential } from "../../domain/credentials/issue_credential.ts";
import { revokeCredential } from "../../domain/credentials/revoke_credential.ts";
import { createPartner } from "../../domain/partners/create_partner.ts";
import { operatorPartnerView } from "../../domain/partners/partner_view.ts";
import { setPartnerStatus } from "../../domain/partners/set_partner_status.ts";
import { setContractSuspended, updateContract } from "../../domain/partners/update_contract.ts";
import { updatePartner } from "../../domain/partners/update_partner.ts";
import { type AppEnv, operatorCtx } from "../env.ts";
import { jsonBody, jsonContent, operatorErrors, RequestId } from "../schemas/common.ts";
import { throwOnInvalid } from "../validation.ts";
import {
  ContractTermsSchema,
  CreatePartnerBody,
  CredentialSchema,
  OperatorPartner,
  ReasonBody,
  UpdatePartnerBody,
} from "./schemas.ts";

const PartnerParams = z.object({ partnerId: z.string().min(1).max(64) });
const PartnerResponse = z.object({ partner: OperatorPartner, requestId: RequestId });
const CreatedPartnerResponse = z.object({
  partner: OperatorPartner,
  credential: CredentialSchema,
  requestId: RequestId,
});
const tags = ["Operator: partners"];

const app = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid });

app.openapi(
  createRoute({
    method: "post",
    path: "/operator/v1/partners",
    operationId: "createPartner",
    tags,
    summary: "Create a partner with its contract and first credential",
    request: { body: jsonBody(CreatePartnerBody) },
    responses: {
      201: jsonContent(CreatedPartnerResponse, "Created; the secret is shown once."),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const out = await createPartner({ ctx: operatorCtx(c), input: c.req.valid("json") });
    return json(c, CreatedPartnerResponse.parse({ ...out, requestId: c.get("requestId") }), 201);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/partners/{partnerId}",
    operationId: "getPartner",
    tags,
    summary: "Read a partner",
    request: { params: PartnerParams },
    responses: { 200: jsonContent(PartnerResponse, "The partner."), ...operatorErrors },
  }),
  async (c) => {
    const { db, clock } = c.get("deps");
    const partner = await operatorPartnerView(db.read, c.req.valid("param").partnerId, clock.now());
    return json(c, PartnerResponse.parse({ partner, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "patch",
    path: "/operator/v1/partners/{partnerId}",
    operationId: "updatePartner",
    tags,
    summary: "Change grants, envelope, builder fee, return-URL origins or limits",
    request: { params: PartnerParams, body: jsonBody(UpdatePartnerBody) },
    responses: { 200: jsonContent(PartnerResponse, "The partner."), ...operatorErrors },
  }),
  async (c) => {
    const partner = await updatePartner({
      ctx: operatorCtx(c),
      input: { partnerId: c.req.valid("param").partnerId, changes: c.req.valid("json") },
    });
    return json(c, PartnerResponse.parse({ partner, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/partners/{partnerId}/contract",
    operationId: "putPartnerContract",
    tags,
    summary: "New contract version, effective from the next period boundary",
    request: { params: PartnerParams, body: jsonBody(ContractTermsSchema) },
    responses: { 200: jsonContent(PartnerResponse, "The partner with its scheduled contract."), ...operatorErrors },
  }),
  async (c) => {
    const partner = await updateContract({
      ctx: operatorCtx(c),
      input: { partnerId: c.req.valid("param").partnerId, terms: c.req.valid("json") },
    });
    return json(c, PartnerResponse.parse({ partner, requestId: c.get("requestId") }), 200);
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
      request: { params: PartnerParams, body: jsonBody(z.object({ reason: z.string().min(3).max(500) })) },
      responses: { 200: jsonContent(PartnerResponse, "The partner."), ...operatorErrors },
    }),
    async (c) => {
      const partner = await setContractSuspended({
        ctx: operatorCtx(c),
        input: { partnerId: c.req.valid("param").partnerId, suspended, reason: c.req.valid("json").reason },
      });
      return json(c, PartnerResponse.parse({ partner, requestId: c.get("requestId") }), 200);
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
      request: {
        params: PartnerParams,
        body: { required: false, content: { "application/json": { schema: ReasonBody } } },
      },
      responses: { 200: jsonContent(PartnerResponse, "The partner."), ...operatorErrors },
    }),
    async (c) => {
      const body = ReasonBody.safeParse(c.get("jsonBody") ?? {});
      throwOnInvalid(body);
      const partner = await setPartnerStatus({
        ctx: operatorCtx(c),
        input: { partnerId: c.req.valid("param").partnerId, status, reason: body.data?.reason },
      });
      return json(c, PartnerResponse.parse({ partner, requestId: c.get("requestId") }), 200);
    },
  );
}

app.openapi(
  createRoute({
    method: "post",
    path: "/operator/v1/partners/{partnerId}/credentials",
    operationId: "createPartnerCredential",
    tags,
    summary: "Issue a new credential; the others stay valid until the overlap ends",
    request: {
      params: PartnerParams,
      body: {
        required: false,
        content: {
          "application/json": {
            schema: z.object({ overlapSeconds: z.number().int().min(0).max(30 * 86400).optional() }),
          },
        },
      },
    },
    responses: {
      201: jsonContent(z.object({ credential: CredentialSchema, requestId: RequestId }), "Issued; shown once."),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const body = z.object({ overlapSeconds: z.number().int().min(0).max(30 * 86400).optional() })
      .safeParse(c.get("jsonBody") ?? {});
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
    tags,
    summary: "Revoke a credential at once",
    request: { params: PartnerParams.extend({ clientId: z.string().min(1).max(64) }) },
    responses: {
      200: jsonContent(
        z.object({ clientId: z.string(), revokedAt: z.string(), requestId: RequestId }),
        "Revoked.",
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
