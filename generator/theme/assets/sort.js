// A long listing ships the cheapest rows of each model; the rest wait in a file of table rows
// (the table's data-rows) until a reader sorts or filters, and then replace the table's body.
// A browser will not fetch beside a page opened from a file: there the rows shown stay, and the
// page does not promise the others.
var canFetch = location.protocol !== "file:";
var rowsLoaded = null;  // one load for the page: a second sort or filter waits for the same rows
if (canFetch) {
  document.querySelectorAll(".more-online").forEach(function (span) { span.hidden = false; });
}
function loadAllRows(done) {
  if (!rowsLoaded) {
    var tables = canFetch ? document.querySelectorAll("table.sortable[data-rows]") : [];
    rowsLoaded = Promise.all(Array.prototype.map.call(tables, function (table) {
      var file = table.dataset.rows;
      return fetch(file).then(function (response) {
        if (!response.ok) { throw new Error(file + ": " + response.status); }
        return response.text();
      }).then(function (rows) {
        table.tBodies[0].innerHTML = rows;
        table.removeAttribute("data-rows");
        shorten(table);
        var note = table.closest("section").querySelector(".more-rows");
        if (note) { note.hidden = true; }
      }).catch(function () {});  // offline: the rows shown stay, the CSV has them all
    }));
  }
  rowsLoaded.then(done);
}

// Each table shows its first few setups (in the order it is sorted, among those the filters keep) and a
// button that shows the rest: a listing of ten models stays a page a phone can scroll. Without
// JavaScript every row the page holds shows.
var FIRST_ROWS = 10;
function shorten(table) {
  var wrap = table.closest(".table-wrap");
  var more = wrap.nextElementSibling && wrap.nextElementSibling.classList.contains("show-rows")
    ? wrap.nextElementSibling : null;
  if (!table.classList.contains("short")) { if (more) { more.remove(); } return; }
  var shown = 0;
  Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
    if (!row.hidden) { shown += 1; }
    row.classList.toggle("later", !row.hidden && shown > FIRST_ROWS);
  });
  if (shown <= FIRST_ROWS) { if (more) { more.remove(); } return; }
  if (!more) {
    more = document.createElement("p");
    more.className = "show-rows";
    var button = document.createElement("button");
    button.type = "button";
    button.addEventListener("click", function () {
      table.classList.remove("short");
      shorten(table);
      var next = table.tBodies[0].rows[FIRST_ROWS];
      var link = next && next.querySelector("a");
      if (link) { link.focus({ preventScroll: true }); }
    });
    more.appendChild(button);
    wrap.after(more);
  }
  more.firstChild.textContent = "Show all " + shown + " setups";
}
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.classList.add("short");
  shorten(table);
});

// Sort a table by the column whose heading button was pressed; press again to reverse.
// A listing's "Sort by" choice (the headings are hidden on a phone) sorts every table the same way.
(function () {
  function sortTable(table, col, up) {
    var body = table.tBodies[0];
    var heads = table.querySelectorAll("thead th");
    var numeric = heads[col].querySelector("button").dataset.numeric === "1";
    heads.forEach(function (th) { th.removeAttribute("aria-sort"); });
    heads[col].setAttribute("aria-sort", up ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    // Rows that tie keep the order the page was published in (at the same cost per token, the cheaper
    // run first), whatever sort came before: each row's place in it, noted before the first sort.
    if (!table.dataset.numbered) {
      rows.forEach(function (row, i) { row.dataset.published = i; });
      table.dataset.numbered = "1";
    }
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col];
      var p = numeric ? Number(x.dataset.value) : x.textContent.trim();
      var q = numeric ? Number(y.dataset.value) : y.textContent.trim();
      var order = numeric ? p - q : p.localeCompare(q);
      return (up ? order : -order) || a.dataset.published - b.dataset.published;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    shorten(table);
  }
  var choice = document.querySelector("select[data-sort]");
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead button").forEach(function (button) {
      button.addEventListener("click", function () {
        var col = Number(button.dataset.col);
        var up = button.parentElement.getAttribute("aria-sort") !== "ascending";
        loadAllRows(function () {
          sortTable(table, col, up);
          if (choice) { choice.value = col + (up ? ":asc" : ":desc"); }
        });
      });
    });
  });
  if (choice) {
    choice.addEventListener("change", function () {
      var parts = choice.value.split(":");
      loadAllRows(function () {
        document.querySelectorAll("table.sortable").forEach(function (table) {
          sortTable(table, Number(parts[0]), parts[1] === "asc");
        });
      });
    });
  }
})();

// Filter a listing's setups by model, method, GPU and provider; a model with no setup left is hidden.
(function () {
  var form = document.querySelector("form.filters");
  if (!form) { return; }
  form.hidden = false;
  var selects = Array.prototype.slice.call(form.querySelectorAll("select[data-filter]"));
  var status = form.querySelector(".filter-count");
  function apply() {
    var shown = 0;
    document.querySelectorAll("table.sortable").forEach(function (table) {
      var left = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var keep = selects.every(function (s) { return !s.value || row.dataset[s.dataset.filter] === s.value; });
        row.hidden = !keep;
        if (keep) { left += 1; }
      });
      table.closest("section").hidden = left === 0;
      shorten(table);
      shown += left;
    });
    var any = selects.some(function (s) { return s.value; });
    status.textContent = any ? shown + (shown === 1 ? " setup matches" : " setups match") : "";
  }
  selects.forEach(function (s) { s.addEventListener("change", function () { loadAllRows(apply); }); });
})();
