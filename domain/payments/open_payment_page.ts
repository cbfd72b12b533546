/**
 * `POST /pay/api/session`: the payment page exchanges its link token for a
 * page ticket and gets what it shows, by the payment's method: the VENUE_B
 * send (venue_b_send.ts) or the on-chain checkout (checkout_page.ts).
 */
import type { Ctx } from "../context.ts";
import { checkoutView } from "./checkout_page.ts";
import { exchangeLink } from "./payment_page_session.ts";
import { sendPage } from "./venue_b_send.ts";

export async function openPaymentPage(ctx: Ctx, token: string) {
  const { ticket, session, payment } = await exchangeLink(ctx, token);
  const page = payment.method === "VENUE_B_USD_SEND"
    ? await sendPage(ctx, session, payment)
    : await checkoutView(ctx, session, payment);
  return { ticket, payment: page };
}
