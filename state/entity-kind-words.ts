/**
 * Kind words people type in English and French ("library", "bibliothèque"…): in an entity search such a word matches
 * that kind or a name carrying the word in either language, since ODCAF names Gatineau's libraries "Bibliothèque …".
 */
import { foldText } from './entity-canada.js';

/** One kind: the schema.org type it stands for and the name words (both languages) that say it. */
export interface KindWord {
  /** schema.org type; its subtypes match too. */
  readonly kind: string;
  /** Folded words a name may carry for this kind, English and French. */
  readonly nameWords: readonly string[];
}

/** Typed word (folded; singular and plural, English and French) → the kind it asks for. */
const TABLE: readonly (readonly [readonly string[], KindWord])[] = [
  [['library', 'libraries', 'bibliotheque', 'bibliotheques'], { kind: 'Library', nameWords: ['library', 'bibliotheque', 'bibliotheques'] }],
  [['school', 'schools', 'ecole', 'ecoles'], { kind: 'School', nameWords: ['school', 'ecole'] }],
  [['hospital', 'hospitals', 'hopital', 'hopitaux'], { kind: 'Hospital', nameWords: ['hospital', 'hopital', 'hospitalier'] }],
  [['clinic', 'clinics', 'clinique', 'cliniques'], { kind: 'MedicalClinic', nameWords: ['clinic', 'clinique'] }],
  [['museum', 'museums', 'musee', 'musees'], { kind: 'Museum', nameWords: ['museum', 'musee', 'ecomusee'] }],
  [['gallery', 'galleries', 'galerie', 'galeries'], { kind: 'ArtGallery', nameWords: ['gallery', 'galerie'] }],
  [['theatre', 'theatres', 'theater', 'theaters'], { kind: 'PerformingArtsTheater', nameWords: ['theatre', 'theater'] }],
  [['pharmacy', 'pharmacies', 'pharmacie'], { kind: 'Pharmacy', nameWords: ['pharmacy', 'pharmacie'] }],
  [['university', 'universities', 'universite', 'universites'], { kind: 'CollegeOrUniversity', nameWords: ['university', 'universite'] }],
  [['college', 'colleges', 'cegep', 'cegeps'], { kind: 'CollegeOrUniversity', nameWords: ['college', 'cegep'] }],
  [['park', 'parks', 'parc', 'parcs'], { kind: 'Park', nameWords: ['park', 'parc'] }],
  [['church', 'churches', 'eglise', 'eglises'], { kind: 'Church', nameWords: ['church', 'eglise'] }],
  [['bakery', 'bakeries', 'boulangerie', 'boulangeries'], { kind: 'Bakery', nameWords: ['bakery', 'boulangerie'] }],
  [['restaurant', 'restaurants'], { kind: 'Restaurant', nameWords: ['restaurant'] }],
];

const BY_WORD = new Map<string, KindWord>();
for (const [words, k] of TABLE) for (const w of words) BY_WORD.set(foldText(w), k);

/** The kind a typed word asks for ("Bibliothèque", "library", "écoles"), or null for an ordinary word. */
export function kindWord(word: string): KindWord | null {
  return BY_WORD.get(foldText(word)) ?? null;
}
