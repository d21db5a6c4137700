import type { VoiceMessages } from './voice-en.ts';

/** Les textes de la vue vocale en français ; typé contre l’anglais. */
const voiceFr: VoiceMessages = {
  region: 'Salon vocal',
  inChannel: 'Dans ce salon',
  empty: 'Personne n’est encore là.',
  join: 'Rejoindre le vocal',
  joining: 'Connexion…',
  leave: 'Quitter',
  mute: 'Couper le micro',
  unmute: 'Activer le micro',
  deafen: 'Couper le son',
  undeafen: 'Rétablir le son',
  cameraOn: 'Activer la caméra',
  cameraOff: 'Couper la caméra',
  shareScreen: 'Partager l’écran',
  stopSharing: 'Arrêter le partage',
  speaking: 'parle',
  mutedBadge: 'micro coupé',
  deafenedBadge: 'son coupé',
  serverMuted: 'rendu muet par un modérateur',
  input: 'Micro',
  output: 'Haut-parleur',
  defaultDevice: 'Par défaut',
  echoCancellation: 'Annulation d’écho',
  noiseSuppression: 'Suppression du bruit',
  connected: 'Vocal connecté',
  connecting: 'Connexion au vocal…',
  noConnect: 'Vous n’avez pas la permission de rejoindre ce salon.',
  failed: 'Impossible de démarrer le vocal : {{reason}}',
  video: 'Vidéo de {{name}}',
  screenOf: 'Écran de {{name}}',
};

export default voiceFr;
