// Ferrule's docs page: Swagger UI on the app's own OpenAPI document. The page names the
// document's URL relative to itself (data-openapi-url), so it also works behind a proxy that
// serves the app under a path prefix. This file, not an inline script, so the page's
// Content-Security-Policy can allow scripts from the server alone.
(function () {
  'use strict';
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: new URL(root.getAttribute('data-openapi-url'), document.baseURI).href,
    domNode: root,
    deepLinking: true,
    // The Authorize button's authorization-code and implicit flows come back here; Swagger
    // UI's default is oauth2-redirect.html beside the page, which the server does not serve.
    oauth2RedirectUrl: new URL(root.getAttribute('data-oauth2-redirect-url'), document.baseURI).href,
    // Swagger UI's default sends the document's URL to a public validator for a badge: the
    // page must make no request that leaves the server it came from.
    validatorUrl: null,
  });
})();
