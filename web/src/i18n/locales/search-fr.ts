import type searchEn from './search-en.ts';

/** La recherche de messages dans l’en-tête du salon. */
const searchFr: typeof searchEn = {
  label: 'Rechercher',
  hints: 'Filtres de recherche',
  dateFormat: 'une date, AAAA-MM-JJ',
  filter: {
    from: 'une personne : les messages qu’elle a écrits',
    mentions: 'une personne : les messages qui la mentionnent',
    in: 'un salon',
    has: 'link, embed, file, image, video, sound ou sticker',
    before: 'une date : les messages écrits avant ce jour',
    after: 'une date : les messages écrits après ce jour',
    during: 'une date : les messages écrits ce jour-là',
    pinned: 'true ou false',
  },
  results: 'Résultats de la recherche',
  close: 'Fermer la recherche',
  searching: 'Recherche…',
  count_one: '{{formatted}} résultat',
  count_other: '{{formatted}} résultats',
  noResults: 'Aucun résultat pour « {{query}} ».',
  noResultsHint: 'Vérifiez l’orthographe, utilisez moins de mots ou retirez un filtre.',
  pages: 'Pages de résultats',
  previous: 'Précédente',
  next: 'Suivante',
  pageOf: 'Page {{page}} sur {{pages}}',
  problem: {
    user: '{{filter}} : personne ne s’appelle « {{value}} » ici.',
    channel: '{{filter}} : aucun salon ne s’appelle « {{value}} » ici.',
    has: '{{filter}} : « {{value}} » n’est pas l’une des valeurs {{values}}.',
    date: '{{filter}} : « {{value}} » n’est pas une date comme 2025-01-31.',
    pinned: '{{filter}} : « {{value}} » n’est ni true ni false.',
  },
};

export default searchFr;
