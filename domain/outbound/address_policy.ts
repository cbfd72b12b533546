/**
 * Which IP addresses the service may connect to on someone else's behalf.
 * Only globally reachable unicast addresses: a URL a partner gives us must
 * never reach the platform's own network (loopback, private ranges, the
 * cloud metadata address on link-local, the carrier's shared space) nor
 * anything reserved. IPv6 forms that carry an IPv4 address (IPv4-mapped,
 * NAT64, 6to4) are judged by the address they carry. Anything this module
 * cannot classify is refused: an allowlist, not a blocklist, so a range
 * nobody thought of fails closed.
 */

/** Why an address is refused; the words the operator reads in an attempt's record. */
export type AddressRefusal =
  | "loopback"
  | "privado"
  | "link-local"
  | "compartilhado (CGNAT)"
  | "multicast"
  | "não especificado"
  | "reservado"
  | "inválido";

interface Range {
  base: bigint;
  bits: bigint;
  refusal: AddressRefusal;
}

/** IANA's IPv4 special-purpose ranges that are not globally reachable, and multicast. */
const IPV4_REFUSED: Range[] = [
  ["0.0.0.0/8", "não especificado"],
  ["10.0.0.0/8", "privado"],
  ["100.64.0.0/10", "compartilhado (CGNAT)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "privado"],
  ["192.0.0.0/24", "reservado"],
  ["192.0.2.0/24", "reservado"],
  ["192.88.99.0/24", "reservado"],
  ["192.168.0.0/16", "privado"],
  ["198.18.0.0/15", "reservado"],
  ["198.51.100.0/24", "reservado"],
  ["203.0.113.0/24", "reservado"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reservado"],
].map(([cidr, refusal]) => rangeOf(cidr, 32, refusal as AddressRefusal));

/**
 * IPv6 ranges inside global unicast (2000::/3) that are still not globally
 * reachable: IETF protocol assignments (Teredo, benchmarking, ORCHID) and
 * documentation. Everything outside 2000::/3 is refused before these.
 */
const IPV6_GLOBAL_REFUSED: Range[] = [
  ["2001::/23", "reservado"],
  ["2001:db8::/32", "reservado"],
  ["3fff::/20", "reservado"],
].map(([cidr, refusal]) => rangeOf(cidr, 128, refusal as AddressRefusal));

/** Outside global unicast: what each well-known range is, for the record. */
const IPV6_NAMED: Range[] = [
  ["::1/128", "loopback"],
  ["::/128", "não especificado"],
  ["fc00::/7", "privado"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "privado"],
  ["ff00::/8", "multicast"],
].map(([cidr, refusal]) => rangeOf(cidr, 128, refusal as AddressRefusal));

/** IPv6 prefixes whose low 32 bits (NAT64, IPv4-mapped) or bits 16-47 (6to4) are an IPv4 address. */
const IPV4_MAPPED = rangeOf("::ffff:0:0/96", 128, "reservado");
const NAT64_WELL_KNOWN = rangeOf("64:ff9b::/96", 128, "reservado");
const SIX_TO_FOUR = rangeOf("2002::/16", 128, "reservado");
const GLOBAL_UNICAST = rangeOf("2000::/3", 128, "reservado");

/** Why `address` (an IPv4 or IPv6 literal, without brackets) may not be reached; null when it may. */
export function addressRefusal(address: string): AddressRefusal | null {
  const v4 = parseIpv4(address);
  if (v4 !== null) return refusalOfIpv4(v4);
  const v6 = parseIpv6(address);
  if (v6 === null) return "inválido";
  if (inRange(v6, IPV4_MAPPED) || inRange(v6, NAT64_WELL_KNOWN)) return refusalOfIpv4(v6 & 0xffff_ffffn);
  if (inRange(v6, SIX_TO_FOUR)) return refusalOfIpv4((v6 >> 80n) & 0xffff_ffffn);
  const named = IPV6_NAMED.find((range) => inRange(v6, range));
  if (named) return named.refusal;
  if (!inRange(v6, GLOBAL_UNICAST)) return "reservado";
  return IPV6_GLOBAL_REFUSED.find((range) => inRange(v6, range))?.refusal ?? null;
}

/** Whether `hostname` (as a URL spells it: IPv6 in brackets) is an IP literal rather than a name. */
export function ipLiteralOf(hostname: string): string | null {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return parseIpv4(bare) !== null || parseIpv6(bare) !== null ? bare : null;
}

function refusalOfIpv4(value: bigint): AddressRefusal | null {
  return IPV4_REFUSED.find((range) => inRange(value, range))?.refusal ?? null;
}

function inRange(value: bigint, range: Range): boolean {
  return value >> range.bits === range.base >> range.bits;
}

/** `bits` of a range here are the host bits (width minus prefix length), so a shift compares the prefix. */
function rangeOf(cidr: string, width: 32 | 128, refusal: AddressRefusal): Range {
  const [address, length] = cidr.split("/");
  const base = width === 32 ? parseIpv4(address) : parseIpv6(address);
  if (base === null) throw new Error(`Bad range ${cidr}`);
  return { base, bits: BigInt(width - Number(length)), refusal };
}

/** Dotted decimal, four octets, no leading zeros (the form URLs and resolvers produce). */
function parseIpv4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part) && Number(part) <= 255)) {
    return null;
  }
  return parts.reduce((value, part) => (value << 8n) | BigInt(part), 0n);
}

/** RFC 4291 text forms: hex groups, one `::`, an optional dotted IPv4 tail; no zone id. */
function parseIpv6(text: string): bigint | null {
  if (!text.includes(":") || text.includes("%")) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (half: string, last: boolean): number[] | null => {
    if (half === "") return [];
    const groups: number[] = [];
    const parts = half.split(":");
    for (const [index, part] of parts.entries()) {
      if (last && index === parts.length - 1 && part.includes(".")) {
        const v4 = parseIpv4(part);
        if (v4 === null) return null;
        groups.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(part)) {
        groups.push(parseInt(part, 16));
      } else {
        return null;
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0], halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1], true) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}
