// The search index waits until the reader turns to search.
//
// Material requests search/search_index.json (about 350 kB in English, more in Chinese)
// as soon as a page loads, so every page, the playground included, would carry the whole
// index before anyone has typed a word. This script, loaded before Material's bundle, holds
// that one request back and sends it when the reader focuses or opens the search box, or
// presses one of Material's search keys; until then the box says "Initializing search", as
// it does while the index loads. Offline (file:), Material reads search_index.js instead,
// untouched here.
(() => {
  const INDEX = /\/search\/search_index\.json$/;
  const open = XMLHttpRequest.prototype.open;
  const send = XMLHttpRequest.prototype.send;
  let release;
  const wanted = new Promise((resolve) => {
    release = resolve;
  });
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    this.isSearchIndex = INDEX.test(new URL(String(url), location.href).pathname);
    return open.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (...body) {
    if (!this.isSearchIndex) return send.apply(this, body);
    wanted.then(() => send.apply(this, body));
  };
  const wants = (target) =>
    target instanceof Element && target.closest('form[name="search"], label[for="__search"]');
  document.addEventListener("focusin", (event) => wants(event.target) && release());
  document.addEventListener("click", (event) => wants(event.target) && release());
  document.addEventListener("keydown", (event) => {
    if (["/", "s", "f"].includes(event.key.toLowerCase())) release();
  });
})();
