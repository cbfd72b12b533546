// The /docs page: Scalar's API reference over both OpenAPI documents, configured by the server (the JSON block
// #docs-config, see routes/docs.tsx). Try-it targets this page's own origin, whatever the documents' servers say,
// because the page's CSP lets it talk to its own origin only.
const config = JSON.parse(document.getElementById("docs-config").textContent);
config.servers = [{ url: location.origin, description: "This service" }];
Scalar.createApiReference("#reference", config);
