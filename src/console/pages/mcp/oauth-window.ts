/**
 * Opens an authorization flow the API started (an /api/v1/oauth-flows/{id} URL bound to this browser) in a
 * popup opened at the click (so no popup blocker stops it), or, when popups are refused, in this tab (the
 * provider then comes back to `returnTo` where the API supports it). `start` asks the API for the URL.
 * Resolves when the popup closes, or when this page loses its handle on it: the service's callback page is
 * Cross-Origin-Opener-Policy: same-origin, so reaching it (the flow is done) reads as closed here; a provider
 * page with that policy does too, earlier, and then the page re-reads the status when it gets the focus back.
 */
export async function authorizeInPopup(start: () => Promise<string>, onOpen?: (w: Window) => void): Promise<"closed" | "redirected"> {
  const w = window.open("about:blank", "kb-oauth", "popup,width=560,height=720");
  let url: string;
  try {
    url = await start();
  } catch (e) {
    w?.close();
    throw e;
  }
  if (!w) {
    window.location.assign(url);
    return "redirected";
  }
  w.location.href = url;
  onOpen?.(w);
  await new Promise<void>((resolve) => {
    const t = setInterval(() => {
      if (w.closed) {
        clearInterval(t);
        resolve();
      }
    }, 500);
  });
  return "closed";
}
