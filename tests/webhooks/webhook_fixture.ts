/** A partner with a webhook endpoint, as the operator registers it, and the delivery job run on demand. */
import type { TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";

/** A new partner whose endpoint is `url`; `newClient` makes an event to deliver, `deliveries` reads the record. */
export async function hooked(env: TestEnv, partnerId: string, url: string) {
  const partner = await createPartner(env, { partnerId });
  const body = await expectJson(await operator(env, "PUT", `/operator/v1/partners/${partnerId}/webhook`, { url }), 200);
  env.watchedSecrets.add("webhook secret", body.signingSecret);
  return {
    newClient: async (externalUserId: string) =>
      await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId }, headers: ik() }), 201),
    deliveries: async () =>
      (await expectJson(await operator(env, "GET", `/operator/v1/partners/${partnerId}/webhook-deliveries`), 200))
        .deliveries,
  };
}

/** One pass of the webhook-delivery job, waiting for its attempts; answers its summary. */
export const deliver = async (env: TestEnv) =>
  (await expectJson(await operator(env, "POST", "/operator/v1/jobs/webhook-delivery/run"), 200)).summary;
