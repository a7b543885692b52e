// Fetching the files a page is told to open by its address (`?sites=`, `?target=`, `?image=`,
// `?mask=`, `?init=`): only from the page's own origin, so that a link to the page cannot make it
// read, show or train on a file from another server. A page served by `sad view` thus reads
// nothing but what that server serves; an exported page, what its own server serves.

/** The response to `url`, if `url` is of this page's origin and answers with success; else an
 * error that names it. */
export async function fetchOwn(url) {
  const resolved = new URL(url, location.href);
  if (resolved.origin !== location.origin) {
    throw new Error(`${url}: not opened: this page opens files of its own server only (${location.origin})`);
  }
  const response = await fetch(resolved);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${response.statusText}`);
  return response;
}
