/** @jsxImportSource hono/jsx */
/**
 * `/docs`: a self-contained reference page rendered from the same OpenAPI
 * document the API serves, so it can never drift from the routes. No script and
 * no CDN: it works offline and behind strict proxies.
 */
import type { FC } from "hono/jsx";

// deno-lint-ignore no-explicit-any
type Doc = any;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

function schemaSummary(schema: Doc, doc: Doc, depth = 0): string {
  if (!schema) return "";
  if (schema.$ref) {
    const name = schema.$ref.split("/").pop();
    return depth > 0 ? name : schemaSummary(doc.components?.schemas?.[name], doc, depth + 1) || name;
  }
  if (schema.type === "array") return `${schemaSummary(schema.items, doc, depth + 1)}[]`;
  if (schema.type === "object" && schema.properties && depth < 2) {
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties).map(([name, value]) =>
      `${name}${required.has(name) ? "" : "?"}: ${schemaSummary(value, doc, depth + 1)}`
    );
    return `{ ${fields.join(", ")} }`;
  }
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ");
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type ?? "any";
  return schema.nullable ? `${type} | null` : type;
}

const Operation: FC<{ path: string; method: string; op: Doc; doc: Doc }> = ({ path, method, op, doc }) => (
  <section class="op">
    <h3>
      <span class={`m ${method}`}>{method.toUpperCase()}</span> <code>{path}</code>
    </h3>
    {op.summary && <p>{op.summary}</p>}
    {op.parameters?.length > 0 && (
      <table>
        <tr>
          <th>parameter</th>
          <th>in</th>
          <th>type</th>
          <th>description</th>
        </tr>
        {op.parameters.map((p: Doc) => (
          <tr>
            <td>
              <code>{p.name}</code>
              {p.required ? " *" : ""}
            </td>
            <td>{p.in}</td>
            <td>
              <code>{schemaSummary(p.schema, doc)}</code>
            </td>
            <td>{p.description ?? p.schema?.description ?? ""}</td>
          </tr>
        ))}
      </table>
    )}
    {op.requestBody && (
      <p>
        Body: <code>{schemaSummary(op.requestBody.content?.["application/json"]?.schema, doc)}</code>
      </p>
    )}
    <ul>
      {Object.entries(op.responses ?? {}).map(([status, response]: [string, Doc]) => (
        <li>
          <b>{status}</b> {response.description}{" "}
          {status.startsWith("2") && <code>{schemaSummary(response.content?.["application/json"]?.schema, doc)}</code>}
        </li>
      ))}
    </ul>
  </section>
);

export function docsPage(doc: Doc) {
  const byTag = new Map<string, { path: string; method: string; op: Doc }[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Doc][]) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "Other";
      byTag.set(tag, [...(byTag.get(tag) ?? []), { path, method, op }]);
    }
  }
  return "<!doctype html>" + (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{doc.info.title} — reference</title>
        <style>
          {`body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
code{font:13px ui-monospace,monospace;background:#f3f3f3;padding:1px 4px;border-radius:3px}
.op{border-top:1px solid #ddd;padding:.5rem 0}.m{font:bold 12px ui-monospace,monospace;padding:2px 6px;border-radius:3px;color:#fff}
.get{background:#2b6cb0}.post{background:#2f855a}.put{background:#b7791f}.patch{background:#6b46c1}.delete{background:#c53030}
table{border-collapse:collapse;font-size:14px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}`}
        </style>
      </head>
      <body>
        <h1>{doc.info.title}</h1>
        <p>
          Version {doc.info.version}. Machine-readable:{" "}
          <a href="/v1/openapi.json">/v1/openapi.json</a>. Authentication: HTTP Basic with your clientId and
          clientSecret. Errors:{" "}
          <code>
            {"{error:{code,message,requestId}}"}
          </code>.
        </p>
        {[...byTag.entries()].map(([tag, ops]) => (
          <>
            <h2>{tag}</h2>
            {ops.map((o) => <Operation key={`${o.method} ${o.path}`} {...o} doc={doc} />)}
          </>
        ))}
      </body>
    </html>
  );
}
