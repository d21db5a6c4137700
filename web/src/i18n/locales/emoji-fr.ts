import type emojiEn from './emoji-en.ts';

/** Le sélecteur d’émojis. */
const emojiFr: typeof emojiEn = {
  button: 'Émoji',
  moreReactions: 'Plus de réactions',
  picker: 'Sélecteur d’émojis',
  search: 'Trouver un émoji',
  list: 'Émojis',
  categories: 'Catégories d’émojis',
  results: 'Résultats de la recherche',
  none: 'Aucun émoji ne correspond à « {{query}} ».',
  custom: 'Émojis de {{name}}',
  category: {
    people: 'Émoticônes et personnes',
    nature: 'Animaux et nature',
    food: 'Nourriture et boissons',
    activities: 'Activités',
    travel: 'Voyages et lieux',
    objects: 'Objets',
    symbols: 'Symboles',
    flags: 'Drapeaux',
  },
};

export default emojiFr;
