/**
 * Amounts and times as a Brazilian reader writes them, for the sentences an
 * instruction answers: "1.250,000001" (the exact decimal string regrouped,
 * never through a float) and "26/11/2026 às 16:20 (horário de Brasília)".
 */

/** An exact decimal string in pt-BR digits, at least two decimals: "49.9" → "49,90", "1250.000001" → "1.250,000001". */
export function ptBrAmount(decimal: string): string {
  const [whole, fraction = ""] = decimal.split(".");
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ".")},${fraction.padEnd(2, "0")}`;
}

const BRASILIA = new Intl.DateTimeFormat("pt-BR", {
  timeZone: "America/Sao_Paulo",
  day: "2-digit",
  month: "2-digit",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
});

/** A moment on Brasília's clock (America/Sao_Paulo), where the clients are. */
export function brasiliaTime(ms: number): string {
  const parts = Object.fromEntries(BRASILIA.formatToParts(new Date(ms)).map((part) => [part.type, part.value]));
  return `${parts.day}/${parts.month}/${parts.year} às ${parts.hour}:${parts.minute} (horário de Brasília)`;
}
