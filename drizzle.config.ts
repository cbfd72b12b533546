// drizzle-kit reads this to generate SQL migrations from db/schema.ts (`deno task db:generate`).
export default {
  dialect: "sqlite",
  schema: "./db/schema.ts",
  out: "./db/migrations",
};
