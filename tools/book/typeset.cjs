// Typeset TeX into SVG with MathJax, for `book.typeset` (run by the build, never in a browser).
//
// Reads one JSON request per line on stdin, {"math": [[tex, display], ...]}, the formulas of
// one page, and writes one JSON line per request:
//   {"html": [...], "defs": "<svg>...</svg>", "errors": [[index, message], ...]}
// Each formula becomes an <mjx-container> holding an SVG (drawn with paths: no fonts) and
// the same formula as MathML, which screen readers and the search index read. Glyph shapes
// are defined once per page, in "defs", which the page must include.
// Usage: node typeset.cjs MATHJAX_DIR  (the mathjax npm package, e.g. node_modules/mathjax)
"use strict";
const path = require("path");
// stdout carries the replies, one JSON line each: anything else goes to stderr.
console.log = console.error;
const readline = require("readline");

require(path.resolve(process.argv[2], "es5", "node-main.js"))
  .init({
    // Every TeX extension, loaded up front: typesetting here is synchronous, so none can
    // be loaded on demand (autoload), and an unknown macro must be an error (noundefined
    // would draw it in red instead).
    loader: { load: ["input/tex-full", "output/svg", "a11y/assistive-mml"] },
    tex: {
      packages: { "[-]": ["autoload", "noundefined"] },
      // A TeX error fails the build rather than showing red text on the page.
      formatError: (jax, error) => {
        throw error;
      },
    },
    svg: { fontCache: "global" },
  })
  .then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const cache = MathJax.startup.output.fontCache;
    const lines = readline.createInterface({ input: process.stdin });
    lines.on("line", (line) => {
      const request = JSON.parse(line);
      cache.clearCache();
      const html = [];
      const errors = [];
      request.math.forEach(([tex, display], index) => {
        try {
          html.push(adaptor.outerHTML(MathJax.tex2svg(tex, { display })));
        } catch (error) {
          html.push("");
          errors.push([index, String(error.message || error)]);
        }
      });
      const defs = adaptor.outerHTML(cache.getCache());
      process.stdout.write(JSON.stringify({ html, defs, errors }) + "\n");
    });
  })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
