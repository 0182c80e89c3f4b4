// The status page's script: swap in `/fragment` every 2 s; keep the page as it is when that
// fails.
(function () {
  var live = document.getElementById('live');
  var stamp = document.getElementById('updated');
  // the page's address without the user name and password a login may have put in it (a
  // fetch of an address with credentials fails); the browser sends the login it keeps
  var url = new URL('fragment', document.baseURI);
  url.username = '';
  url.password = '';
  function refresh() {
    fetch(url.href, { cache: 'no-store', credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.text(); })
      .then(function (html) {
        live.innerHTML = html;
        document.body.setAttribute('data-refreshed', String(Number(document.body.getAttribute('data-refreshed') || 0) + 1));
        stamp.textContent = 'updated ' + new Date().toLocaleTimeString();
      })
      .catch(function (e) { stamp.textContent = 'not updated: ' + e.message; });
  }
  refresh();
  setInterval(refresh, 2000);
})();
