/** The address allowlist, form by form: what a partner URL may resolve to. */
import assert from "node:assert/strict";
import { addressRefusal } from "../../domain/outbound/address_policy.ts";

Deno.test("addressRefusal refuses every non-public form, IPv6 wrappers of IPv4 judged by what they carry", () => {
  const refused: Record<string, string> = {
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "::1": "loopback",
    "::ffff:127.0.0.1": "loopback",
    "::ffff:7f00:1": "loopback",
    "2002:7f00:1::": "loopback",
    "10.0.0.5": "privado",
    "172.16.0.1": "privado",
    "172.31.255.255": "privado",
    "192.168.1.10": "privado",
    "64:ff9b::a00:5": "privado",
    "fc00::1": "privado",
    "fd12:3456::1": "privado",
    "fec0::1": "privado",
    "169.254.169.254": "link-local",
    "fe80::1": "link-local",
    "::ffff:169.254.169.254": "link-local",
    "100.64.0.1": "compartilhado (CGNAT)",
    "100.127.255.255": "compartilhado (CGNAT)",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "ff02::1": "multicast",
    "0.0.0.0": "não especificado",
    "0.1.2.3": "não especificado",
    "::": "não especificado",
    "255.255.255.255": "reservado",
    "240.0.0.1": "reservado",
    "192.0.0.8": "reservado",
    "192.0.2.1": "reservado",
    "198.18.0.1": "reservado",
    "203.0.113.9": "reservado",
    "2001:db8::1": "reservado",
    "2001::1": "reservado",
    "64:ff9b:1::1": "reservado",
    "::127.0.0.1": "reservado",
    "100::1": "reservado",
    "not-an-address": "inválido",
    "fe80::1%eth0": "inválido",
    "1:2:3:4:5:6:7:8:9": "inválido",
    "01.2.3.4": "inválido",
  };
  for (const [address, refusal] of Object.entries(refused)) {
    assert.equal(addressRefusal(address), refusal, address);
  }
});

Deno.test("addressRefusal lets globally reachable unicast through, in every spelling", () => {
  for (
    const address of [
      "8.8.8.8",
      "93.184.215.14",
      "172.15.255.255",
      "172.32.0.1",
      "100.63.255.255",
      "100.128.0.1",
      "2606:4700:4700::1111",
      "2a00:1450:4001:81b::200e",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ]
  ) {
    assert.equal(addressRefusal(address), null, address);
  }
});
