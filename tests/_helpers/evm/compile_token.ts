/**
 * Rebuilds test_token.json (ABI and bytecode of TestToken.sol) with the solc
 * compiler from npm: `deno run -A tests/_helpers/evm/compile_token.ts`. The
 * tests deploy the committed output, so they need no compiler at run time.
 */
import solc from "solc";

const here = new URL(".", import.meta.url);
const input = {
  language: "Solidity",
  sources: { "TestToken.sol": { content: await Deno.readTextFile(new URL("TestToken.sol", here)) } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors ?? []).filter((error: { severity: string }) => error.severity === "error");
if (errors.length) throw new Error(JSON.stringify(errors, null, 2));
const contract = output.contracts["TestToken.sol"].TestToken;
await Deno.writeTextFile(
  new URL("test_token.json", here),
  JSON.stringify(
    { compiler: solc.version(), abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` },
    null,
    1,
  ) +
    "\n",
);
console.log(`TestToken compiled with solc ${solc.version()}`);
