/* What the playground's scripts (playground.js, trained.js) share: building elements and
   filling the page's words. */
(function () {
  "use strict";

  // <tag attributes>children</tag>; an attribute that is null or undefined is left out.
  function element(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      if (attributes[name] !== null && attributes[name] !== undefined) node.setAttribute(name, attributes[name]);
    });
    node.append.apply(node, children || []);
    return node;
  }

  // "{token}, dimension {dim}" with {token: "Your", dim: 1} -> "Your, dimension 1"
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, key) { return values[key]; });
  }

  window.playgroundDom = { element: element, fill: fill };
})();
