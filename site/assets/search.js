// The search page: Pagefind's interface over the index built with the site.
// Addresses are worked out from this page's own, so the site can live in a
// sub-folder of its host; a query in the address (?q=...) is searched at once.
(function () {
  "use strict";
  var root = new URL("../", document.location.href).pathname;
  var ui = new PagefindUI({
    element: "#search",
    bundlePath: root + "pagefind/",
    baseUrl: root,
    showImages: false,
    showSubResults: false,
    resetStyles: false
  });
  var query = new URLSearchParams(document.location.search).get("q");
  if (query) {
    ui.triggerSearch(query);
  }
})();
