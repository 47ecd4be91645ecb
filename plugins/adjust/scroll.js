async ([maxMs, maxSteps, stepMs]) => {
  const start = Date.now();
  let steps = 0;
  const height = () => Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0);
  while (steps < maxSteps && Date.now() - start < maxMs) {
    const before = window.scrollY;
    window.scrollBy(0, window.innerHeight);
    steps++;
    await new Promise(r => setTimeout(r, stepMs));
    if (window.scrollY === before && window.scrollY + window.innerHeight >= height()) break;
  }
  const bottom = window.scrollY + window.innerHeight >= height() - 2;
  window.scrollTo(0, 0);
  return {steps, height: height(), bottom, ms: Date.now() - start};
}
