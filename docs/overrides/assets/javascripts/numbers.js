/* Numbers as a reader writes them, for the playground's embedding fields (playground.js).

   A language writes its decimals with a point (en, zh: 0.5) or a comma (vi, id: 0,5), and
   groups thousands with the other sign (1,250 or 1.250). Values here are from -5 to 5, so
   either sign reads as the decimal one, unless what was typed could be a grouped thousand
   in the page's language: "1,250" in English may mean 1250, "1.250" in Vietnamese too.
   Such a value is refused, never read as one of its two numbers. Refused as well: what is
   not one number (empty, "abc", "1.000,5", "1 000", "0x1", "Infinity").

   Taken: "0.5" and "0,5" in every language but where they could be thousands, " 0.5 ",
   ".5", "5.", "+0.5", "1e-1", "−0.5" (the Unicode minus sign) and full-width digits (NFKC).
   The build checks this module in Node: tests/test_playground.py. */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.playgroundNumbers = factory();
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // sign, whole part, decimal sign and its digits, exponent: each part but a digit optional
  var NUMBER = /^([+-]?)(\d*)(?:([.,])(\d*))?(e[+-]?\d+)?$/i;
  // A whole part that can open a grouped number: 1 to 3 digits, not a leading 0.
  var GROUP_HEAD = /^[1-9]\d{0,2}$/;

  /**
   * Read what a reader typed.
   * @param {string} text The field's value.
   * @param {string} decimal The page language's decimal sign, "." or ",".
   * @returns {{value: number}|{error: string, decimal: (string|undefined)}} The number; or
   *   the error "number" (not a number), or "grouping" (could be a grouped thousand), with
   *   `decimal` the same digits written with the language's decimal sign.
   */
  function read(text, decimal) {
    var typed = String(text).normalize("NFKC").replace(/\u2212/g, "-").trim();
    var m = NUMBER.exec(typed);
    if (!m || m[2] + (m[4] || "") === "") return { error: "number" };
    var sign = m[1], whole = m[2], mark = m[3], digits = m[4] || "", exponent = m[5] || "";
    if (mark && mark !== decimal && digits.length === 3 && GROUP_HEAD.test(whole) && !exponent) {
      return { error: "grouping", decimal: sign + whole + decimal + digits };
    }
    return { value: Number(sign + whole + "." + digits + exponent) };
  }

  return { read: read };
});
