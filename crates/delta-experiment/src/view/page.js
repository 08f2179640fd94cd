// delta view: progressive enhancement only; every page reads fine without it.
(function () {
  "use strict";
  // Expand or fold every long block at once.
  document.querySelectorAll("[data-toggle-details]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("data-toggle-details") === "open";
      document.querySelectorAll("details").forEach(function (d) { d.open = open; });
    });
  });
  // Sortable tables: click a header; numbers sort by their data-sort value.
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.querySelectorAll("th");
    headers.forEach(function (th, column) {
      th.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var numeric = th.classList.contains("num");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[column].getAttribute("data-sort") || a.cells[column].textContent;
          var y = b.cells[column].getAttribute("data-sort") || b.cells[column].textContent;
          var order = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
