// Sort a table by the column whose heading button was pressed; press again to reverse.
(function () {
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var body = table.tBodies[0];
    table.querySelectorAll("thead button").forEach(function (button) {
      button.addEventListener("click", function () {
        var col = Number(button.dataset.col);
        var numeric = button.dataset.numeric === "1";
        var up = button.parentElement.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (th) { th.removeAttribute("aria-sort"); });
        button.parentElement.setAttribute("aria-sort", up ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col];
          var p = numeric ? Number(x.dataset.value) : x.textContent.trim();
          var q = numeric ? Number(y.dataset.value) : y.textContent.trim();
          var order = numeric ? p - q : p.localeCompare(q);
          return up ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
