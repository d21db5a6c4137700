/**
 * The standard emojis the picker and `:shortcode:` completion offer: a curated set of about six hundred
 * common ones with their usual shortcodes, by category (no dataset package: a full Unicode set is several
 * hundred KiB, this is a few). Each category is "name char name char …" split on spaces.
 */
export const EMOJI_CATEGORIES = [
  'people',
  'nature',
  'food',
  'activities',
  'travel',
  'objects',
  'symbols',
  'flags',
] as const;
export type EmojiCategory = (typeof EMOJI_CATEGORIES)[number];

const DATA: Record<EmojiCategory, string> = {
  people:
    'grinning 😀 smiley 😃 smile 😄 grin 😁 laughing 😆 sweat_smile 😅 rofl 🤣 joy 😂 slight_smile 🙂 upside_down 🙃 wink 😉 blush 😊 innocent 😇 smiling_face_with_hearts 🥰 heart_eyes 😍 star_struck 🤩 kissing_heart 😘 kissing 😗 relaxed ☺️ kissing_closed_eyes 😚 yum 😋 stuck_out_tongue 😛 stuck_out_tongue_winking_eye 😜 zany_face 🤪 stuck_out_tongue_closed_eyes 😝 money_mouth 🤑 hugging 🤗 hand_over_mouth 🤭 shushing_face 🤫 thinking 🤔 zipper_mouth 🤐 raised_eyebrow 🤨 neutral_face 😐 expressionless 😑 no_mouth 😶 smirk 😏 unamused 😒 rolling_eyes 🙄 grimacing 😬 lying_face 🤥 relieved 😌 pensive 😔 sleepy 😪 drooling_face 🤤 sleeping 😴 mask 😷 thermometer_face 🤒 head_bandage 🤕 nauseated_face 🤢 vomiting_face 🤮 sneezing_face 🤧 hot_face 🥵 cold_face 🥶 woozy_face 🥴 dizzy_face 😵 exploding_head 🤯 cowboy 🤠 partying_face 🥳 sunglasses 😎 nerd 🤓 monocle_face 🧐 confused 😕 worried 😟 slight_frown 🙁 frowning2 ☹️ open_mouth 😮 hushed 😯 astonished 😲 flushed 😳 pleading_face 🥺 frowning 😦 anguished 😧 fearful 😨 cold_sweat 😰 disappointed_relieved 😥 cry 😢 sob 😭 scream 😱 confounded 😖 persevere 😣 disappointed 😞 sweat 😓 weary 😩 tired_face 😫 yawning_face 🥱 triumph 😤 rage 😡 angry 😠 cursing_face 🤬 smiling_imp 😈 imp 👿 skull 💀 poop 💩 clown 🤡 ghost 👻 alien 👽 robot 🤖 smiley_cat 😺 heart_eyes_cat 😻 see_no_evil 🙈 hear_no_evil 🙉 speak_no_evil 🙊 wave 👋 raised_back_of_hand 🤚 hand_splayed 🖐️ raised_hand ✋ vulcan 🖖 ok_hand 👌 pinching_hand 🤏 v ✌️ fingers_crossed 🤞 love_you_gesture 🤟 metal 🤘 call_me 🤙 point_left 👈 point_right 👉 point_up_2 👆 point_down 👇 point_up ☝️ thumbsup 👍 thumbsdown 👎 fist ✊ punch 👊 clap 👏 raised_hands 🙌 open_hands 👐 palms_up_together 🤲 handshake 🤝 pray 🙏 writing_hand ✍️ nail_care 💅 muscle 💪 eyes 👀 eye 👁️ brain 🧠 baby 👶 shrug 🤷 facepalm 🤦 raising_hand 🙋 bow 🙇 dancer 💃 man_dancing 🕺',
  nature:
    'dog 🐶 cat 🐱 mouse 🐭 hamster 🐹 rabbit 🐰 fox 🦊 bear 🐻 panda_face 🐼 koala 🐨 tiger 🐯 lion_face 🦁 cow 🐮 pig 🐷 frog 🐸 monkey_face 🐵 chicken 🐔 penguin 🐧 bird 🐦 baby_chick 🐤 duck 🦆 eagle 🦅 owl 🦉 bat 🦇 wolf 🐺 boar 🐗 horse 🐴 unicorn 🦄 bee 🐝 bug 🐛 butterfly 🦋 snail 🐌 lady_beetle 🐞 ant 🐜 spider 🕷️ turtle 🐢 snake 🐍 lizard 🦎 t_rex 🦖 octopus 🐙 squid 🦑 shrimp 🦐 crab 🦀 fish 🐟 tropical_fish 🐠 blowfish 🐡 dolphin 🐬 whale 🐳 shark 🦈 crocodile 🐊 elephant 🐘 giraffe 🦒 camel 🐫 sloth 🦥 hedgehog 🦔 paw_prints 🐾 cactus 🌵 christmas_tree 🎄 evergreen_tree 🌲 deciduous_tree 🌳 palm_tree 🌴 seedling 🌱 herb 🌿 shamrock ☘️ four_leaf_clover 🍀 maple_leaf 🍁 fallen_leaf 🍂 mushroom 🍄 bouquet 💐 rose 🌹 tulip 🌷 sunflower 🌻 blossom 🌼 cherry_blossom 🌸 hibiscus 🌺 earth_africa 🌍 full_moon 🌕 new_moon 🌑 moon 🌙 star ⭐ star2 🌟 sparkles ✨ zap ⚡ fire 🔥 sun ☀️ partly_sunny ⛅ cloud ☁️ cloud_rain 🌧️ thunder_cloud_rain ⛈️ snowflake ❄️ snowman ⛄ rainbow 🌈 ocean 🌊 droplet 💧 umbrella ☔',
  food: 'apple 🍎 green_apple 🍏 pear 🍐 tangerine 🍊 lemon 🍋 banana 🍌 watermelon 🍉 grapes 🍇 strawberry 🍓 cherries 🍒 peach 🍑 mango 🥭 pineapple 🍍 coconut 🥥 kiwi 🥝 tomato 🍅 avocado 🥑 eggplant 🍆 potato 🥔 carrot 🥕 corn 🌽 hot_pepper 🌶️ cucumber 🥒 broccoli 🥦 garlic 🧄 onion 🧅 bread 🍞 croissant 🥐 baguette_bread 🥖 pretzel 🥨 cheese 🧀 egg 🥚 cooking 🍳 pancakes 🥞 bacon 🥓 cut_of_meat 🥩 poultry_leg 🍗 hamburger 🍔 fries 🍟 pizza 🍕 hotdog 🌭 sandwich 🥪 taco 🌮 burrito 🌯 salad 🥗 popcorn 🍿 spaghetti 🍝 ramen 🍜 stew 🍲 curry 🍛 sushi 🍣 bento 🍱 dumpling 🥟 rice 🍚 rice_ball 🍙 fried_shrimp 🍤 icecream 🍦 ice_cream 🍨 doughnut 🍩 cookie 🍪 birthday 🎂 cake 🍰 cupcake 🧁 pie 🥧 chocolate_bar 🍫 candy 🍬 lollipop 🍭 honey_pot 🍯 milk 🥛 coffee ☕ tea 🍵 sake 🍶 champagne 🍾 wine_glass 🍷 cocktail 🍸 tropical_drink 🍹 beer 🍺 beers 🍻 champagne_glass 🥂 tumbler_glass 🥃 cup_with_straw 🥤 fork_and_knife 🍴',
  activities:
    'soccer ⚽ basketball 🏀 football 🏈 baseball ⚾ tennis 🎾 volleyball 🏐 rugby_football 🏉 8ball 🎱 ping_pong 🏓 badminton 🏸 hockey 🏒 golf ⛳ bow_and_arrow 🏹 fishing_pole_and_fish 🎣 boxing_glove 🥊 martial_arts_uniform 🥋 ice_skate ⛸️ ski 🎿 trophy 🏆 medal 🏅 first_place 🥇 second_place 🥈 third_place 🥉 tada 🎉 confetti_ball 🎊 balloon 🎈 gift 🎁 ribbon 🎀 jack_o_lantern 🎃 sparkler 🎇 fireworks 🎆 video_game 🎮 joystick 🕹️ game_die 🎲 jigsaw 🧩 chess_pawn ♟️ dart 🎯 bowling 🎳 slot_machine 🎰 performing_arts 🎭 art 🎨 microphone 🎤 headphones 🎧 musical_keyboard 🎹 guitar 🎸 trumpet 🎺 violin 🎻 drum 🥁 clapper 🎬 ticket 🎫',
  travel:
    'car 🚗 taxi 🚕 bus 🚌 police_car 🚓 ambulance 🚑 fire_engine 🚒 truck 🚚 tractor 🚜 bike 🚲 motor_scooter 🛵 motorcycle 🏍️ train 🚆 bullettrain_side 🚄 metro 🚇 airplane ✈️ rocket 🚀 helicopter 🚁 sailboat ⛵ ship 🚢 anchor ⚓ construction 🚧 fuelpump ⛽ rotating_light 🚨 traffic_light 🚦 map 🗺️ moyai 🗿 statue_of_liberty 🗽 tokyo_tower 🗼 european_castle 🏰 stadium 🏟️ ferris_wheel 🎡 roller_coaster 🎢 beach 🏖️ desert_island 🏝️ mountain_snow 🏔️ volcano 🌋 camping 🏕️ house 🏠 house_with_garden 🏡 office 🏢 hospital 🏥 bank 🏦 hotel 🏨 school 🏫 church ⛪ night_with_stars 🌃 sunrise 🌅 city_sunset 🌆 milky_way 🌌 globe_with_meridians 🌐',
  objects:
    'watch ⌚ iphone 📱 computer 💻 keyboard ⌨️ desktop 🖥️ printer 🖨️ computer_mouse 🖱️ cd 💿 floppy_disk 💾 camera 📷 video_camera 📹 movie_camera 🎥 tv 📺 radio 📻 telephone ☎️ battery 🔋 electric_plug 🔌 bulb 💡 flashlight 🔦 candle 🕯️ moneybag 💰 dollar 💵 money_with_wings 💸 credit_card 💳 gem 💎 wrench 🔧 hammer 🔨 tools 🛠️ gear ⚙️ nut_and_bolt 🔩 magnet 🧲 scissors ✂️ paperclip 📎 pushpin 📌 round_pushpin 📍 straight_ruler 📏 pencil ✏️ pen 🖊️ memo 📝 book 📖 books 📚 notebook 📓 bookmark 🔖 newspaper 📰 envelope ✉️ email 📧 inbox_tray 📥 outbox_tray 📤 package 📦 mailbox 📫 calendar 📅 date 📆 clipboard 📋 file_folder 📁 open_file_folder 📂 chart_up 📈 chart_down 📉 bar_chart 📊 link 🔗 lock 🔒 unlock 🔓 key 🔑 bell 🔔 no_bell 🔕 mega 📣 loudspeaker 📢 mag 🔍 hourglass ⌛ hourglass_flowing_sand ⏳ alarm_clock ⏰ stopwatch ⏱️ shield 🛡️ crossed_swords ⚔️ pill 💊 syringe 💉 dna 🧬 microscope 🔬 telescope 🔭 satellite 📡 test_tube 🧪 thermometer 🌡️ broom 🧹 basket 🧺 soap 🧼 door 🚪 bed 🛏️ couch 🛋️ shower 🚿 crystal_ball 🔮 shopping_cart 🛒 label 🏷️ crown 👑 eyeglasses 👓 dark_sunglasses 🕶️ necktie 👔 shirt 👕 jeans 👖 dress 👗 running_shoe 👟 tophat 🎩 lipstick 💄 ring 💍 backpack 🎒 briefcase 💼',
  symbols:
    'heart ❤️ orange_heart 🧡 yellow_heart 💛 green_heart 💚 blue_heart 💙 purple_heart 💜 black_heart 🖤 white_heart 🤍 brown_heart 🤎 broken_heart 💔 two_hearts 💕 sparkling_heart 💖 heartpulse 💗 cupid 💘 100 💯 anger 💢 boom 💥 dizzy 💫 sweat_drops 💦 zzz 💤 speech_balloon 💬 thought_balloon 💭 white_check_mark ✅ heavy_check_mark ✔️ x ❌ negative_squared_cross_mark ❎ heavy_plus_sign ➕ heavy_minus_sign ➖ question ❓ exclamation ❗ bangbang ‼️ interrobang ⁉️ warning ⚠️ no_entry ⛔ no_entry_sign 🚫 recycle ♻️ sparkle ❇️ red_circle 🔴 orange_circle 🟠 yellow_circle 🟡 green_circle 🟢 blue_circle 🔵 purple_circle 🟣 black_circle ⚫ white_circle ⚪ arrow_up ⬆️ arrow_down ⬇️ arrow_left ⬅️ arrow_right ➡️ arrows_counterclockwise 🔄 new 🆕 free 🆓 up 🆙 cool 🆒 ok 🆗 sos 🆘 infinity ♾️ copyright ©️ registered ®️ tm ™️ musical_note 🎵 notes 🎶',
  flags:
    'checkered_flag 🏁 triangular_flag_on_post 🚩 white_flag 🏳️ black_flag 🏴 rainbow_flag 🏳️‍🌈 pirate_flag 🏴‍☠️ flag_eu 🇪🇺 flag_fr 🇫🇷 flag_be 🇧🇪 flag_ch 🇨🇭 flag_ca 🇨🇦 flag_gb 🇬🇧 flag_us 🇺🇸 flag_de 🇩🇪 flag_es 🇪🇸 flag_it 🇮🇹 flag_nl 🇳🇱 flag_pt 🇵🇹 flag_br 🇧🇷 flag_jp 🇯🇵 flag_in 🇮🇳',
};

export interface StandardEmoji {
  name: string;
  char: string;
  category: EmojiCategory;
}

let all: StandardEmoji[] | undefined;

/** Every standard emoji in picker order (parsed once, on first use). */
export function standardEmojis(): StandardEmoji[] {
  if (!all) {
    all = [];
    for (const category of EMOJI_CATEGORIES) {
      const parts = DATA[category].split(' ');
      for (let i = 0; i + 1 < parts.length; i += 2) {
        all.push({ name: parts[i] as string, char: parts[i + 1] as string, category });
      }
    }
  }
  return all;
}

/** Other names people type for some of them. */
const ALIASES: [string, string][] = [
  ['+1', '👍'],
  ['-1', '👎'],
  ['thumbs_up', '👍'],
  ['flame', '🔥'],
  ['smiling_face', '☺️'],
  ['laugh', '😆'],
  ['party', '🥳'],
];

/** `:shortcode:` names for the composer's completion (the text stores the character). */
export function shortcodes(): [string, string][] {
  return [...standardEmojis().map((e): [string, string] => [e.name, e.char]), ...ALIASES];
}
