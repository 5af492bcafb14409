export function Placeholder({ area, what }: { area: string; what: string }) {
  return (
    <section className="placeholder" aria-labelledby="placeholder-title">
      <h1 id="placeholder-title">{area}</h1>
      <p>This area is not built yet: it will hold {what}. The board and Settings work today; the API is documented at /docs.</p>
    </section>
  );
}
