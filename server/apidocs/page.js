// The API reference page: Swagger UI over the running server's OpenAPI
// document. It never asks for a token. With serve --dev, settings.json
// names the dev token endpoint and client, and the page fetches its own
// token there so that "Try it out" runs against the dev catalogue;
// otherwise the page is a reference only.
"use strict";

(function () {
  // No Authorize dialog: it would ask for a token or a client secret to be
  // typed into the page.
  function noAuthorizeButtons() {
    var none = function () { return function () { return null; }; };
    return { wrapComponents: { authorizeBtn: none, authorizeOperationBtn: none } };
  }

  function start(settings) {
    var dev = settings.devToken;
    if (dev) {
      devNote();
    }
    var ui = SwaggerUIBundle({
      url: "docs/openapi.yaml",
      dom_id: "#reference",
      layout: "BaseLayout",
      deepLinking: true,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      displayOperationId: true,
      // Nothing is sent to the public validator: no request leaves the origin.
      validatorUrl: null,
      supportedSubmitMethods: dev ? ["get", "head"] : [],
      plugins: [noAuthorizeButtons],
      onComplete: function () {
        if (dev) {
          fetchDevToken(dev).then(function (token) {
            ui.preauthorizeApiKey("bearerAuth", token);
            document.body.setAttribute("data-dev-token", "ready");
          }, function (err) {
            console.warn("no dev token: " + err.message);
          });
        }
        document.body.setAttribute("data-reference", "ready");
      },
    });
  }

  // devNote says where the token of "Try it out" comes from. Styled
  // through the DOM, which the page's Content-Security-Policy allows.
  function devNote() {
    var note = document.createElement("p");
    note.id = "dev-note";
    note.textContent = "Development server: \u201cTry it out\u201d sends its requests to this " +
      "server's sample catalogue with a token the page fetched from the development token endpoint.";
    var s = note.style;
    s.font = "14px/1.4 sans-serif";
    s.margin = "0";
    s.padding = "10px 20px";
    s.background = "#fff8e1";
    s.borderBottom = "1px solid #f0d98c";
    document.body.insertBefore(note, document.body.firstChild);
  }

  // fetchDevToken runs the client-credentials grant of the dev issuer.
  function fetchDevToken(dev) {
    return fetch(dev.tokenUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        grant_type: "client_credentials",
        client_id: dev.clientId,
        client_secret: dev.clientSecret,
        audience: dev.audience,
      }),
    }).then(function (resp) {
      if (!resp.ok) {
        throw new Error("POST " + dev.tokenUrl + " answered " + resp.status);
      }
      return resp.json();
    }).then(function (body) { return body.access_token; });
  }

  fetch("docs/settings.json").then(function (resp) {
    if (!resp.ok) {
      throw new Error("docs/settings.json answered " + resp.status);
    }
    return resp.json();
  }).then(start, function (err) {
    // The reference itself does not need the settings.
    console.warn(err.message);
    start({});
  });
})();
